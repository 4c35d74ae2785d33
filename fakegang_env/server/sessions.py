"""Registry of the episodes that plain-HTTP clients address by `episode_id`.

OpenEnv's stock HTTP routes keep no episode between requests (only `/ws` does), so the server
holds HTTP episodes here. Rules, chosen so that a crashed or forgetful client cannot exhaust the
server and a retrying client cannot apply an action twice:

* Idle episodes expire after `ttl_s` seconds without a request (checked lazily, on every
  insertion and lookup; no background thread).
* At most `max_episodes` are held. When a new episode needs room, expired episodes go first,
  then the least recently used *finished* episode is evicted (its result was already returned
  to its client). If every held episode is still in progress, the new episode is refused with
  `RegistryFullError` (HTTP 503): evicting a live episode would silently destroy someone's work.
* Each episode has its own lock, so concurrent requests for one episode are applied one at a
  time and different episodes never wait for each other.
* Steps are idempotent when the client sends `action_index` (the episode's `action_count`
  before the action): a repeat of the last applied index returns the stored response without
  applying the action again; `action_index == action_count` applies it; anything else is an
  `ActionIndexConflict` (HTTP 409) that says what the server expected.

This module is pure Python (no OpenEnv, no FastAPI) so it is cheap to unit-test.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

DEFAULT_TTL_S = 1800.0
DEFAULT_MAX_EPISODES = 256
_FORGOTTEN_MEMORY = 4096  # how many expired/evicted ids we remember for a better 404 message


class EpisodeLike(Protocol):
    """The part of `fakegang_env.engine.Episode` the registry relies on."""

    action_count: int
    done: bool

    def step(
        self, action_type: str, account_id: str | None, trace: str | None = None
    ) -> dict[str, Any]: ...


class EpisodeNotFoundError(LookupError):
    """No held episode has this id (never created, expired or evicted)."""


class RegistryFullError(RuntimeError):
    """Every slot holds an unfinished, unexpired episode; the new one is refused."""


class ActionIndexConflict(ValueError):
    """`action_index` is neither the next action nor a replay of the last applied one."""

    def __init__(self, message: str, *, expected: int, received: int, last_applied: int | None):
        super().__init__(message)
        self.expected = expected
        self.received = received
        self.last_applied = last_applied


@dataclass
class _AppliedStep:
    index: int
    action: tuple[str, str | None, str | None]
    response: Any


@dataclass
class HeldEpisode:
    """One episode held for HTTP clients, with its lock and its last applied step."""

    episode_id: str
    episode: Any
    last_used: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_applied: _AppliedStep | None = None

    def apply(
        self,
        action_type: str,
        account_id: str | None,
        action_index: int | None,
        render: Callable[[dict[str, Any]], Any],
        *,
        trace: str | None = None,
    ) -> tuple[Any, bool]:
        """Apply one action (or replay it); returns `(rendered response, replayed)`.

        `render` turns the engine's observation dict into the response that is stored for
        replays, so a replay returns exactly the bytes the first attempt returned.
        """
        key = (action_type, account_id, trace)
        with self.lock:
            count = self.episode.action_count
            last = self.last_applied
            if action_index is not None:
                if last is not None and action_index == last.index:
                    if last.action != key:
                        raise ActionIndexConflict(
                            f"action_index {action_index} was already applied with a different "
                            f"action ({last.action[0]} {last.action[1]!r}); the next action needs "
                            f"action_index {count}",
                            expected=count,
                            received=action_index,
                            last_applied=last.index,
                        )
                    return last.response, True
                if action_index != count:
                    replay = (
                        f", or {last.index} to repeat the last applied action"
                        if last is not None
                        else ""
                    )
                    raise ActionIndexConflict(
                        f"action_index {action_index} is out of order: the server expected "
                        f"{count} (the episode's action_count){replay}",
                        expected=count,
                        received=action_index,
                        last_applied=None if last is None else last.index,
                    )
            result = self.episode.step(action_type, account_id, trace)
            response = render(result)
            if self.episode.action_count != count:
                self.last_applied = _AppliedStep(count, key, response)
            return response, False


class EpisodeRegistry:
    """Thread-safe map `episode_id -> HeldEpisode` with idle expiry, a cap and a default id."""

    def __init__(
        self,
        ttl_s: float = DEFAULT_TTL_S,
        max_episodes: int = DEFAULT_MAX_EPISODES,
        clock: Callable[[], float] = time.monotonic,
    ):
        if ttl_s <= 0:
            raise ValueError(f"ttl_s must be > 0, got {ttl_s}")
        if max_episodes < 1:
            raise ValueError(f"max_episodes must be >= 1, got {max_episodes}")
        self.ttl_s = float(ttl_s)
        self.max_episodes = int(max_episodes)
        self._clock = clock
        self._lock = threading.Lock()
        self._held: OrderedDict[str, HeldEpisode] = OrderedDict()  # least recently used first
        self._forgotten: OrderedDict[str, str] = OrderedDict()  # id -> why it is gone
        self._default_id: str | None = None
        self.expired_total = 0
        self.evicted_total = 0

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    def __contains__(self, episode_id: object) -> bool:
        with self._lock:
            return episode_id in self._held

    @property
    def default_id(self) -> str | None:
        """Id of the episode used when a request names none (last reset without an id)."""
        return self._default_id

    def stats(self) -> dict[str, Any]:
        """Counts for logs and the `/health`-style introspection."""
        with self._lock:
            return {
                "held": len(self._held),
                "max_episodes": self.max_episodes,
                "ttl_s": self.ttl_s,
                "expired_total": self.expired_total,
                "evicted_total": self.evicted_total,
            }

    # ------------------------------------------------------------------ mutations
    def ensure_room(self, episode_id: str) -> None:
        """Raise `RegistryFullError` now if `put(episode_id, ...)` could not find room.

        Lets `/reset` refuse before spending time generating a network. Evicts nothing.
        """
        with self._lock:
            self._purge_expired(self._clock())
            if episode_id in self._held or len(self._held) < self.max_episodes:
                return
            if not any(held.episode.done for held in self._held.values()):
                raise self._full_error()

    def put(self, episode_id: str, episode: Any, *, make_default: bool = False) -> HeldEpisode:
        """Hold `episode` under `episode_id`, replacing any episode with that id.

        Raises `RegistryFullError` when there is no room (see the module docstring).
        """
        with self._lock:
            now = self._clock()
            self._purge_expired(now)
            if episode_id not in self._held and len(self._held) >= self.max_episodes:
                self._evict_one_finished()
            held = HeldEpisode(episode_id=episode_id, episode=episode, last_used=now)
            self._held[episode_id] = held
            self._held.move_to_end(episode_id)
            self._forgotten.pop(episode_id, None)
            if make_default:
                self._default_id = episode_id
            return held

    def get(self, episode_id: str | None) -> HeldEpisode:
        """The held episode for `episode_id` (or the default one when it is None); touches it."""
        with self._lock:
            now = self._clock()
            self._purge_expired(now)
            if episode_id is None:
                episode_id = self._default_id
                if episode_id is None:
                    raise EpisodeNotFoundError(
                        "no default episode: POST /reset without an episode_id first, or pass "
                        "the episode_id that /reset returned"
                    )
            held = self._held.get(episode_id)
            if held is None:
                why = self._forgotten.get(episode_id)
                if why is not None:
                    raise EpisodeNotFoundError(f"episode {episode_id!r} is gone: {why}")
                raise EpisodeNotFoundError(
                    f"unknown episode_id {episode_id!r}: POST /reset to start an episode"
                )
            held.last_used = now
            self._held.move_to_end(episode_id)
            return held

    def purge_expired(self) -> int:
        """Drop every episode idle for longer than the TTL; returns how many were dropped."""
        with self._lock:
            return self._purge_expired(self._clock())

    # ------------------------------------------------------------------ internals (lock held)
    def _purge_expired(self, now: float) -> int:
        dropped = 0
        while self._held:
            episode_id, held = next(iter(self._held.items()))
            idle = now - held.last_used
            if idle <= self.ttl_s:
                break  # ordered by last use: everything after is fresher
            del self._held[episode_id]
            self._forget(episode_id, f"expired after {idle:.0f} s idle (ttl {self.ttl_s:.0f} s)")
            dropped += 1
        self.expired_total += dropped
        return dropped

    def _evict_one_finished(self) -> None:
        for episode_id, held in self._held.items():
            if held.episode.done:
                del self._held[episode_id]
                self._forget(episode_id, "evicted to make room (it had finished)")
                self.evicted_total += 1
                return
        raise self._full_error()

    def _full_error(self) -> RegistryFullError:
        return RegistryFullError(
            f"the server already holds {len(self._held)} unfinished episodes (its cap is "
            f"{self.max_episodes}); finish or abandon some (idle episodes expire after "
            f"{self.ttl_s:.0f} s), or start the server with a larger cap "
            f"(FAKEGANG_MAX_EPISODES)"
        )

    def _forget(self, episode_id: str, why: str) -> None:
        if self._default_id == episode_id:
            self._default_id = None
        self._forgotten[episode_id] = why
        while len(self._forgotten) > _FORGOTTEN_MEMORY:
            self._forgotten.popitem(last=False)
