"""Per-process handles the nodes need but the state must not hold (clients, model, memory).

Nodes look them up from the run's `Context`; the handles are created once per distinct setting
and reused across episodes, so the local model is loaded once and its KV cache stays warm.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from fakegang.graph.context import Context
from fakegang.tools.env_client import EnvClient
from fakegang.tools.memory.store import Memory
from fakegang.tools.models.chat_models import ModelSettings, make_chat_model
from fakegang_env.schema import PlainObservation

_lock = threading.Lock()
_envs: dict[str, EnvClient] = {}
_memories: dict[tuple[str, bool], Memory] = {}
_models: dict[ModelSettings, Any] = {}


class StepCache:
    """What the nodes derive per episode step (the observation, its evidence scores), keyed by
    (thread id, action count), so one step reads SQLite and scores the observation once.

    One bounded cache for the whole process, cleared by `reset_all`. Hand-rolled because the
    standard `functools.lru_cache` memoises a function, while these values are put by the node
    that produced them (`step_env` stores the observation it got). Locked because
    `fakegang eval --concurrency N` plays episodes on N threads of one process.
    """

    def __init__(self, max_entries: int = 256) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, int, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, thread_id: str, action_count: int, kind: str) -> Any | None:
        with self._lock:
            return self._entries.get((thread_id, action_count, kind))

    def put(self, thread_id: str, action_count: int, kind: str, value: Any) -> None:
        with self._lock:
            self._entries[(thread_id, action_count, kind)] = value
            self._entries.move_to_end((thread_id, action_count, kind))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)  # the oldest step goes first

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


STEP_CACHE = StepCache()


def env_client(ctx: Context) -> EnvClient:
    with _lock:
        if ctx.env_url not in _envs:
            _envs[ctx.env_url] = EnvClient(ctx.env_url)
        return _envs[ctx.env_url]


def memory(ctx: Context) -> Memory:
    read_only = not (ctx.learn or ctx.record)
    key = (ctx.db_path, read_only)
    with _lock:
        if key not in _memories:
            _memories[key] = Memory(ctx.db_path, read_only=read_only)
        return _memories[key]


def close_memory(db_path: str) -> None:
    """Close the memories open on `db_path` (a worker's shard, before it is shipped)."""
    with _lock:
        for key in [k for k in _memories if k[0] == db_path]:
            _memories.pop(key).close()


def chat_model(ctx: Context) -> Any:
    settings = ctx.model_settings()
    with _lock:
        if settings not in _models:
            _models[settings] = make_chat_model(settings)
        return _models[settings]


def load_observation(ctx: Context, thread_id: str, action_count: int) -> PlainObservation:
    """The observation after `action_count` actions, from the cache or the memory table."""
    obs = STEP_CACHE.get(thread_id, action_count, "observation")
    if obs is not None:
        return obs
    stored = memory(ctx).load_observation(thread_id)
    if stored is None or stored[0] != action_count:
        raise LookupError(f"no stored observation for thread {thread_id} at action {action_count}")
    obs = PlainObservation(**stored[1])
    STEP_CACHE.put(thread_id, action_count, "observation", obs)
    return obs


def store_observation(ctx: Context, thread_id: str, obs: PlainObservation) -> None:
    STEP_CACHE.put(thread_id, obs.action_count, "observation", obs)
    memory(ctx).save_observation(thread_id, obs.action_count, obs.model_dump(mode="json"))


def reset_all() -> None:
    """Close every handle (tests and the end of a CLI command)."""
    with _lock:
        for env in _envs.values():
            env.close()
        _envs.clear()
        for mem in _memories.values():
            mem.close()
        _memories.clear()
        _models.clear()
        STEP_CACHE.clear()


def install_model(ctx: Context, model: Any) -> None:
    """Use `model` for every episode run with `ctx`'s model settings (tests inject failures)."""
    with _lock:
        _models[ctx.model_settings()] = model
