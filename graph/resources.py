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
