"""Unit tests of the HTTP episode registry: expiry, the cap, the default id, idempotent steps.

Uses a counting stand-in episode and a fake clock, so it runs in milliseconds without OpenEnv.
"""

from __future__ import annotations

import threading

import pytest

from fakegang_env.server.sessions import (
    ActionIndexConflict,
    EpisodeNotFoundError,
    EpisodeRegistry,
    RegistryFullError,
)


class CountingEpisode:
    """Applies every action except `illegal` (which, like the engine, does not count)."""

    def __init__(self) -> None:
        self.action_count = 0
        self.done = False
        self.applied: list[tuple[str, str | None]] = []

    def step(self, action_type: str, account_id: str | None, trace: str | None = None) -> dict:
        if action_type == "illegal":
            return {"action_count": self.action_count, "error": "illegal"}
        self.applied.append((action_type, account_id))
        self.action_count += 1
        if action_type == "submit":
            self.done = True
        return {"action_count": self.action_count, "error": None}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def render(result: dict) -> dict:
    return dict(result)


def test_put_get_and_default_episode() -> None:
    reg = EpisodeRegistry(ttl_s=60, max_episodes=4, clock=Clock())
    with pytest.raises(EpisodeNotFoundError, match="no default episode"):
        reg.get(None)
    reg.put("a", CountingEpisode(), make_default=True)
    reg.put("b", CountingEpisode())  # named: does not become the default
    assert reg.get(None).episode_id == "a"
    assert reg.get("b").episode_id == "b"
    with pytest.raises(EpisodeNotFoundError, match="unknown episode_id 'zzz'"):
        reg.get("zzz")


def test_idle_episodes_expire_and_say_so() -> None:
    clock = Clock()
    reg = EpisodeRegistry(ttl_s=60, max_episodes=4, clock=clock)
    reg.put("old", CountingEpisode(), make_default=True)
    clock.now += 30
    reg.put("young", CountingEpisode())
    clock.now += 31  # "old" idle 61 s, "young" 31 s
    with pytest.raises(EpisodeNotFoundError, match="expired after 61 s idle"):
        reg.get("old")
    assert reg.get("young").episode_id == "young"
    with pytest.raises(EpisodeNotFoundError, match="no default episode"):
        reg.get(None)  # the default expired with "old"
    assert reg.expired_total == 1


def test_a_request_keeps_an_episode_alive() -> None:
    clock = Clock()
    reg = EpisodeRegistry(ttl_s=60, max_episodes=4, clock=clock)
    reg.put("a", CountingEpisode())
    for _ in range(5):
        clock.now += 50
        reg.get("a")  # touched every 50 s: never idle for 60
    assert "a" in reg


def test_cap_evicts_lru_finished_episode_first() -> None:
    reg = EpisodeRegistry(ttl_s=600, max_episodes=3, clock=Clock())
    first_done, second_done = CountingEpisode(), CountingEpisode()
    first_done.done = second_done.done = True
    reg.put("live", CountingEpisode())
    reg.put("done1", first_done)
    reg.put("done2", second_done)
    reg.get("done1")  # done2 is now the least recently used finished episode
    reg.put("new", CountingEpisode())
    assert "done2" not in reg and "done1" in reg and "live" in reg and "new" in reg
    with pytest.raises(EpisodeNotFoundError, match="evicted to make room"):
        reg.get("done2")
    assert reg.evicted_total == 1


def test_cap_refuses_when_every_episode_is_live() -> None:
    reg = EpisodeRegistry(ttl_s=600, max_episodes=2, clock=Clock())
    reg.put("a", CountingEpisode())
    reg.put("b", CountingEpisode())
    with pytest.raises(RegistryFullError, match="holds 2 unfinished episodes .* cap is 2"):
        reg.ensure_room("c")
    with pytest.raises(RegistryFullError):
        reg.put("c", CountingEpisode())
    assert len(reg) == 2 and "c" not in reg
    reg.ensure_room("a")  # restarting a held id needs no new slot
    reg.put("a", CountingEpisode())
    assert len(reg) == 2


def test_cap_makes_room_from_expired_episodes() -> None:
    clock = Clock()
    reg = EpisodeRegistry(ttl_s=60, max_episodes=2, clock=clock)
    reg.put("a", CountingEpisode())
    reg.put("b", CountingEpisode())
    clock.now += 61
    reg.put("c", CountingEpisode())
    assert len(reg) == 1 and "c" in reg


def test_idempotent_replay_returns_stored_result_without_reapplying() -> None:
    reg = EpisodeRegistry(clock=Clock())
    held = reg.put("a", CountingEpisode())
    first, replayed = held.apply("inspect", "u1", 0, render)
    assert not replayed and first["action_count"] == 1
    again, replayed = held.apply("inspect", "u1", 0, render)
    assert replayed and again is first
    assert held.episode.applied == [("inspect", "u1")]  # applied once
    nxt, replayed = held.apply("flag", "u1", 1, render)
    assert not replayed and nxt["action_count"] == 2


def test_out_of_order_indices_conflict_and_change_nothing() -> None:
    reg = EpisodeRegistry(clock=Clock())
    held = reg.put("a", CountingEpisode())
    with pytest.raises(ActionIndexConflict, match="expected 0") as exc:
        held.apply("inspect", "u1", 3, render)
    assert (exc.value.expected, exc.value.received, exc.value.last_applied) == (0, 3, None)
    held.apply("inspect", "u1", 0, render)
    held.apply("inspect", "u2", 1, render)
    for stale in (0, 5):
        with pytest.raises(ActionIndexConflict, match="expected 2.*or 1 to repeat"):
            held.apply("inspect", "u3", stale, render)
    with pytest.raises(ActionIndexConflict, match="already applied with a different action"):
        held.apply("inspect", "u3", 1, render)  # last index, other action: a client bug
    assert held.episode.applied == [("inspect", "u1"), ("inspect", "u2")]


def test_illegal_actions_do_not_consume_an_index() -> None:
    reg = EpisodeRegistry(clock=Clock())
    held = reg.put("a", CountingEpisode())
    held.apply("inspect", "u1", 0, render)
    result, replayed = held.apply("illegal", None, 1, render)
    assert not replayed and result["error"] == "illegal"
    # action_count is still 1: the next action uses index 1, and 0 still replays
    assert held.apply("inspect", "u1", 0, render)[1] is True
    assert held.apply("inspect", "u2", 1, render)[0]["action_count"] == 2


def test_without_action_index_every_request_applies() -> None:
    reg = EpisodeRegistry(clock=Clock())
    held = reg.put("a", CountingEpisode())
    held.apply("inspect", "u1", None, render)
    held.apply("inspect", "u1", None, render)
    assert held.episode.action_count == 2


def test_concurrent_retries_apply_once() -> None:
    reg = EpisodeRegistry(clock=Clock())
    held = reg.put("a", CountingEpisode())
    outcomes: list[bool] = []
    lock = threading.Lock()

    def retry() -> None:
        _, replayed = held.apply("inspect", "u1", 0, render)
        with lock:
            outcomes.append(replayed)

    threads = [threading.Thread(target=retry) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert held.episode.action_count == 1
    assert sorted(outcomes) == [False] + [True] * 15


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="ttl_s"):
        EpisodeRegistry(ttl_s=0)
    with pytest.raises(ValueError, match="max_episodes"):
        EpisodeRegistry(max_episodes=0)
