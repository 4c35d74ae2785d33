"""Per-process handles the nodes need but the state must not hold (clients, model, memory).

Nodes look them up from the run's `Context`; the handles are created once per distinct setting
and reused across episodes, so the local model is loaded once and its KV cache stays warm.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from fakegang.graph.context import Context
from fakegang.tools.chat_models import ModelSettings, make_chat_model
from fakegang.tools.env_client import EnvClient
from fakegang.tools.memory import Memory
from fakegang_env.schema import PlainObservation

_lock = threading.Lock()
_envs: dict[str, EnvClient] = {}
_memories: dict[tuple[str, bool], Memory] = {}
_models: dict[ModelSettings, Any] = {}


@dataclass
class ObservationCache:
    """Latest observation per episode thread, so nodes skip re-reading it from SQLite.

    Locked because `fakegang eval --concurrency N` plays episodes on N threads of one process:
    evicting the oldest entry (`iter` then `pop`) while another thread inserts would raise.
    """

    entries: dict[str, tuple[int, PlainObservation]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def put(self, thread_id: str, action_count: int, obs: PlainObservation) -> None:
        with self.lock:
            self.entries[thread_id] = (action_count, obs)
            if len(self.entries) > 256:
                self.entries.pop(next(iter(self.entries)))

    def get(self, thread_id: str, action_count: int) -> PlainObservation | None:
        with self.lock:
            hit = self.entries.get(thread_id)
        return hit[1] if hit and hit[0] == action_count else None

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


class LockedCacheDict(dict):
    """A dict whose FIFO-eviction idiom `d.pop(next(iter(d)))` is safe across threads.

    `graph.nodes._SCORES` evicts that way without a lock; two threads evicting at once raise
    KeyError (double pop) or RuntimeError (size changed during iteration). Iteration here walks
    a snapshot and `pop` of a missing key returns None. `install_thread_safe_node_caches()`
    swaps it in before episodes run concurrently (the values are pure functions of their keys,
    so a lost entry is only recomputed).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()

    def __iter__(self):
        with self._lock:
            return iter(list(super().keys()))

    def __setitem__(self, key: Any, value: Any) -> None:
        with self._lock:
            super().__setitem__(key, value)

    def pop(self, key: Any, *default: Any) -> Any:
        with self._lock:
            return super().pop(key, *(default or (None,)))


def install_thread_safe_node_caches() -> None:
    """Make the node module's score cache safe for concurrent episodes (idempotent)."""
    from fakegang.graph import nodes

    with _lock:
        if not isinstance(nodes._SCORES, LockedCacheDict):
            nodes._SCORES = LockedCacheDict(nodes._SCORES)


OBSERVATIONS = ObservationCache()


def model_settings(ctx: Context) -> ModelSettings:
    return ModelSettings(
        spec=ctx.model,
        temperature=ctx.temperature,
        seed=ctx.model_seed,
        timeout_s=ctx.llm_timeout_s,
        max_retries=ctx.llm_retries,
        bedrock_model_id=ctx.bedrock_model_id,
        bedrock_region=ctx.bedrock_region,
    )


def env_client(ctx: Context) -> EnvClient:
    with _lock:
        if ctx.env_url not in _envs:
            _envs[ctx.env_url] = EnvClient(ctx.env_url)
        return _envs[ctx.env_url]


def memory(ctx: Context) -> Memory:
    key = (ctx.db_path, not ctx.learn)
    with _lock:
        if key not in _memories:
            _memories[key] = Memory(ctx.db_path, read_only=not ctx.learn)
        return _memories[key]


def chat_model(ctx: Context) -> Any:
    settings = model_settings(ctx)
    with _lock:
        if settings not in _models:
            _models[settings] = make_chat_model(settings)
        return _models[settings]


def load_observation(ctx: Context, thread_id: str, action_count: int) -> PlainObservation:
    """The observation after `action_count` actions, from the cache or the memory table."""
    obs = OBSERVATIONS.get(thread_id, action_count)
    if obs is not None:
        return obs
    stored = memory(ctx).load_observation(thread_id)
    if stored is None or stored[0] != action_count:
        raise LookupError(f"no stored observation for thread {thread_id} at action {action_count}")
    obs = PlainObservation(**stored[1])
    OBSERVATIONS.put(thread_id, action_count, obs)
    return obs


def store_observation(ctx: Context, thread_id: str, obs: PlainObservation) -> None:
    OBSERVATIONS.put(thread_id, obs.action_count, obs)
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
        OBSERVATIONS.clear()


def install_model(ctx: Context, model: Any) -> None:
    """Use `model` for every episode run with `ctx`'s model settings (tests inject failures)."""
    with _lock:
        _models[model_settings(ctx)] = model
