"""The `/ws` path with OpenEnv's own client: `FakeGangEnv` (async and `.sync()`).

The app is served by uvicorn in a thread on a free 127.0.0.1 port (the client needs a real
socket); the module imports OpenEnv once.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from env_fixtures import ThreadedServer, policy_trace, strip_episode_id
from fastapi.testclient import TestClient

from fakegang_env.client import FakeGangEnv
from fakegang_env.models import FakeGangAction, FakeGangObservation, FakeGangState
from fakegang_env.server.app import ServerSettings, build_app

MAX_WS = 5


@pytest.fixture(scope="module")
def app():
    return build_app(ServerSettings(max_ws_sessions=MAX_WS))


@pytest.fixture(scope="module")
def base_url(app) -> str:
    with ThreadedServer(app) as url:
        yield url


def typed(obs: dict) -> dict:
    """The engine observation as FakeGangObservation fields, minus the episode id."""
    return strip_episode_id(FakeGangObservation.model_validate(obs).model_dump())


def test_sync_client_plays_an_episode_equal_to_in_process(base_url: str) -> None:
    trace = policy_trace("naive", "medium", 13)
    with FakeGangEnv(base_url=base_url).sync() as env:
        result = env.reset(task="medium", seed=13)
        assert isinstance(result.observation, FakeGangObservation)
        assert result.observation.episode_id  # a uuid4 was generated
        assert strip_episode_id(result.observation.model_dump()) == typed(trace.observations[0])
        for i, (kind, account_id) in enumerate(trace.actions, start=1):
            result = env.step(FakeGangAction(action_type=kind, account_id=account_id))
            assert strip_episode_id(result.observation.model_dump()) == typed(trace.observations[i])
            assert result.reward == trace.observations[i]["reward"]
            assert result.done == trace.observations[i]["done"]
        assert result.done is True
        state = env.state()
        assert isinstance(state, FakeGangState)
        assert state.done is True and state.task == "medium" and state.seed == 13
        assert state.action_count == len(trace.actions)


async def _play(base_url: str, task: str, seed: int, episode_id: str) -> list[dict]:
    trace = policy_trace("random", task, seed)
    seen = []
    async with FakeGangEnv(base_url=base_url) as env:
        result = await env.reset(task=task, seed=seed, episode_id=episode_id)
        seen.append(result.observation.model_dump())
        for kind, account_id in trace.actions:
            # plain dict actions are accepted too
            result = await env.step({"action_type": kind, "account_id": account_id})
            seen.append(result.observation.model_dump())
    return seen


def test_concurrent_async_sessions_do_not_cross_talk(base_url: str) -> None:
    specs = [("easy", 1), ("medium", 2), ("easy", 1), ("hard", 3)]

    async def main() -> list[list[dict]]:
        return await asyncio.gather(
            *[_play(base_url, t, s, f"ws-{k}") for k, (t, s) in enumerate(specs)]
        )

    results = asyncio.run(main())
    for k, ((task, seed), seen) in enumerate(zip(specs, results, strict=True)):
        assert all(o["episode_id"] == f"ws-{k}" for o in seen)
        want = [typed(o) for o in policy_trace("random", task, seed).observations]
        assert [strip_episode_id(o) for o in seen] == want


def test_errors_are_readable_and_the_session_survives(base_url: str) -> None:
    with FakeGangEnv(base_url=base_url).sync() as env:
        with pytest.raises(RuntimeError, match="call reset"):
            env.step(FakeGangAction(action_type="submit"))
        with pytest.raises(RuntimeError, match="valid tasks: easy, medium, hard"):
            env.reset(task="impossible", seed=1)
        with pytest.raises(RuntimeError, match="seed"):
            env.reset(task="easy", seed=-1)
        with pytest.raises(RuntimeError, match="colour"):
            env.reset(task="easy", seed=1, colour="red")
        result = env.reset(task="easy", seed=1)
        assert result.observation.task == "easy" and result.done is False
        illegal = env.step(FakeGangAction(action_type="inspect", account_id="u_not_there"))
        assert illegal.observation.last_action_error
        assert illegal.observation.action_count == 0


def test_capacity_is_enforced_with_a_clear_error(base_url: str) -> None:
    clients = [FakeGangEnv(base_url=base_url).sync() for _ in range(MAX_WS)]
    try:
        for c in clients:
            c.connect()
            c.reset(task="easy", seed=0)
        extra = FakeGangEnv(base_url=base_url).sync()
        with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
            extra.connect()
            extra.reset(task="easy", seed=0)
        extra.close()
    finally:
        for c in clients:
            c.close()


def test_raw_frames_with_a_bad_action_get_a_validation_error(app) -> None:
    with TestClient(app).websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"task": "easy", "seed": 2}}))
        first = json.loads(ws.receive_text())
        assert first["type"] == "observation"
        assert set(first["data"]) >= {"observation", "reward", "done"}
        ws.send_text(json.dumps({"type": "step", "data": {"action_type": "ban"}}))
        error = json.loads(ws.receive_text())
        assert error["type"] == "error" and error["data"]["code"] == "VALIDATION_ERROR"
        ws.send_text("{not json")
        assert json.loads(ws.receive_text())["data"]["code"] == "INVALID_JSON"
        ws.send_text(json.dumps({"type": "state"}))
        state = json.loads(ws.receive_text())
        assert state["data"]["action_count"] == 0 and state["data"]["seed"] == 2
