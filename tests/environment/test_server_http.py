"""The plain-HTTP contract, in-process with FastAPI's TestClient.

Covers the OpenEnv wire shape, statefulness by episode_id, determinism against the in-process
engine, idempotent and out-of-order steps, the default episode, /tasks, /grader, /schema, expiry
and the cap. Bad input (4xx JSON, state unchanged, never a 500) is test_server_bad_input.py.
"""

from __future__ import annotations

import json
import uuid

import pytest
from env_fixtures import (
    expected_wire,
    policy_trace,
    replay_in_process,
    strip_episode_id,
)
from fastapi.testclient import TestClient
from http_helpers import make_client, reset, state, step, without_id

from fakegang_env.engine import Episode
from fakegang_env.models import FakeGangObservation
from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.server.sessions import EpisodeRegistry
from fakegang_env.tasks import TASKS


@pytest.fixture(scope="module")
def client() -> TestClient:
    return make_client()


# --------------------------------------------------------------------------- shape and state
def test_reset_returns_openenv_wire_shape_with_a_uuid_episode_id(client: TestClient) -> None:
    wire = reset(client, task="medium", seed=4)
    assert set(wire) == {"observation", "reward", "done"}
    obs = wire["observation"]
    assert uuid.UUID(obs["episode_id"]).version == 4
    reference = Episode("medium", 4, episode_id=obs["episode_id"]).observation()
    assert wire == expected_wire(reference)
    # ...and it is what OpenEnv's own serialiser makes of the same observation
    from openenv.core.env_server.serialization import serialize_observation

    openenv_wire = serialize_observation(FakeGangObservation.model_validate(reference))
    assert wire == json.loads(json.dumps(openenv_wire))


def test_reset_keeps_a_client_episode_id(client: TestClient) -> None:
    wire = reset(client, task="easy", seed=1, episode_id="run-7.ep:3")
    assert wire["observation"]["episode_id"] == "run-7.ep:3"
    assert state(client, "run-7.ep:3")["episode_id"] == "run-7.ep:3"


def test_reset_without_a_seed_reports_the_seed_it_used(client: TestClient) -> None:
    obs = reset(client, task="easy")["observation"]
    assert isinstance(obs["seed"], int) and obs["seed"] >= 0
    again = reset(client, task="easy", seed=obs["seed"])["observation"]
    assert strip_episode_id(again) == strip_episode_id(obs)


def test_episodes_are_stateful_over_plain_http(client: TestClient) -> None:
    """The stock OpenEnv routes would forget the reset; ours keep it."""
    obs = reset(client, task="easy", seed=2)["observation"]
    eid = obs["episode_id"]
    target = obs["visible_account_ids"][0]
    r = step(client, eid, ("inspect", target))
    assert r.status_code == 200
    assert r.json()["observation"]["inspected_ids"] == [target]
    st = state(client, eid)
    assert (st["step_count"], st["action_count"], st["task"], st["seed"]) == (1, 1, "easy", 2)
    assert st["network_size"] == len(Episode("easy", 2).network.accounts)


# --------------------------------------------------------------------------- determinism
@pytest.mark.parametrize(
    ("policy", "task", "seed"), [("naive", "hard", 3), ("random", "medium", 5)]
)
def test_http_episode_equals_in_process_episode(
    client: TestClient, policy: str, task: str, seed: int
) -> None:
    trace = policy_trace(policy, task, seed)
    assert trace.observations[-1]["done"], "the reference episode must finish"
    eid = reset(client, task=task, seed=seed)["observation"]["episode_id"]
    count = 0
    for i, action in enumerate(trace.actions, start=1):
        r = step(client, eid, action, index=count)
        assert r.status_code == 200, r.text
        assert without_id(r.json()) == without_id(expected_wire(trace.observations[i]))
        count = r.json()["observation"]["action_count"]
    assert r.json()["done"] is True


def test_same_seed_and_actions_give_identical_http_observations(client: TestClient) -> None:
    trace = policy_trace("naive", "medium", 11)
    runs = []
    for _ in range(2):
        eid = reset(client, task="medium", seed=11)["observation"]["episode_id"]
        runs.append([without_id(step(client, eid, a).json()) for a in trace.actions])
    assert runs[0] == runs[1]


# --------------------------------------------------------------------------- idempotency
def test_repeating_the_last_index_replays_without_applying(client: TestClient) -> None:
    obs = reset(client, task="easy", seed=6)["observation"]
    eid, ids = obs["episode_id"], obs["visible_account_ids"]
    first = step(client, eid, ("inspect", ids[0]), index=0)
    assert first.status_code == 200 and "x-fakegang-replayed" not in first.headers
    before = state(client, eid)
    again = step(client, eid, ("inspect", ids[0]), index=0)
    assert again.status_code == 200
    assert again.headers["x-fakegang-replayed"] == "true"
    assert again.content == first.content
    assert state(client, eid) == before  # not applied twice
    nxt = step(client, eid, ("inspect", ids[1]), index=1)
    assert nxt.json()["observation"]["action_count"] == 2


def test_out_of_order_indices_are_409_and_change_nothing(client: TestClient) -> None:
    obs = reset(client, task="easy", seed=7)["observation"]
    eid, ids = obs["episode_id"], obs["visible_account_ids"]
    ahead = step(client, eid, ("inspect", ids[0]), index=1)
    assert ahead.status_code == 409
    assert ahead.json()["expected_action_index"] == 0
    assert "expected 0" in ahead.json()["message"]
    step(client, eid, ("inspect", ids[0]), index=0)
    step(client, eid, ("inspect", ids[1]), index=1)
    before = state(client, eid)
    for bad in (0, 3, 99):
        r = step(client, eid, ("inspect", ids[2]), index=bad)
        assert r.status_code == 409, r.text
        body = r.json()
        assert body["error"] == "action_index_conflict"
        assert body["expected_action_index"] == 2 and body["received_action_index"] == bad
        assert "expected 2" in body["message"]
    different = step(client, eid, ("flag", ids[1]), index=1)  # last index, other action
    assert different.status_code == 409
    assert "different action" in different.json()["message"]
    assert state(client, eid) == before


def test_illegal_actions_are_200_and_keep_the_index(client: TestClient) -> None:
    eid = reset(client, task="easy", seed=8)["observation"]["episode_id"]
    before = state(client, eid)
    for action in ({"action_type": "inspect"}, {"action_type": "flag", "account_id": "u_nope"}):
        r = step(client, eid, action, index=0)
        assert r.status_code == 200
        assert r.json()["observation"]["last_action_error"]
        assert r.json()["observation"]["action_count"] == 0
    assert state(client, eid) == before


# --------------------------------------------------------------------------- many episodes
def test_interleaved_episodes_do_not_cross_talk(client: TestClient) -> None:
    specs = [("easy", 21), ("medium", 22), ("easy", 21)]
    traces = [policy_trace("naive", task, seed) for task, seed in specs]
    ids = [reset(client, task=t, seed=s)["observation"]["episode_id"] for t, s in specs]
    got: list[list[dict]] = [[] for _ in specs]
    longest = max(len(t.actions) for t in traces)
    for i in range(longest):
        for k, trace in enumerate(traces):
            if i < len(trace.actions):
                got[k].append(without_id(step(client, ids[k], trace.actions[i]).json()))
    for k, trace in enumerate(traces):
        want = [without_id(expected_wire(o)) for o in trace.observations[1:]]
        assert got[k] == want


def test_default_episode_is_the_last_reset_without_an_id(client: TestClient) -> None:
    obs = reset(client, task="easy", seed=9)["observation"]
    reset(client, task="medium", seed=1, episode_id="named-one")  # does not take the default
    r = step(client, None, ("inspect", obs["visible_account_ids"][0]))
    assert r.status_code == 200
    assert r.json()["observation"]["episode_id"] == obs["episode_id"]
    assert state(client, None)["episode_id"] == obs["episode_id"]
    assert state(client, "named-one")["action_count"] == 0


# --------------------------------------------------------------------------- grader, tasks, schema
def test_grader_is_409_until_the_episode_ends(client: TestClient) -> None:
    trace = policy_trace("oracle", "easy", 12)
    eid = reset(client, task="easy", seed=12)["observation"]["episode_id"]
    early = client.get("/grader", params={"episode_id": eid})
    assert early.status_code == 409 and early.json()["error"] == "episode_not_finished"
    for action in trace.actions:
        step(client, eid, action)
    r = client.get("/grader", params={"episode_id": eid})
    assert r.status_code == 200
    reference = Episode("easy", 12, episode_id=eid)
    for action in trace.actions:
        reference.step(*action)
    assert r.json() == reference.grader()
    assert r.json()["score"] == trace.observations[-1]["grader_score"]
    missing = client.get("/grader", params={"episode_id": "never-made"})
    assert missing.status_code == 404


def test_tasks_lists_budgets_rules_evasion_and_actions(client: TestClient) -> None:
    r = client.get("/tasks")
    assert r.status_code == 200
    body = r.json()
    by_name = {t["name"]: t for t in body["tasks"]}
    assert set(by_name) == set(TASKS)
    for name, spec in TASKS.items():
        t = by_name[name]
        assert t["max_steps"] == spec.max_steps
        assert t["accounts"] == spec.n_accounts
        assert t["win_rule"] == {
            "recall_at_least": spec.win_recall,
            "precision_at_least": spec.win_precision,
        }
        assert t["evasion_steps"] == list(spec.evasion_steps)
    kinds = {a["action_type"]: a for a in body["actions"]}
    assert kinds["investigate_network"]["steps"] == 2 and kinds["submit"]["steps"] == 0
    assert "action_type" in body["action_schema"]["properties"]


def test_openenv_routes_still_answer(client: TestClient) -> None:
    assert client.get("/health").json()["status"] == "healthy"
    assert client.get("/metadata").json()["name"] == "fakegang_env"
    schema = client.get("/schema").json()
    assert "network_size" in schema["state"]["properties"]
    assert "visible_accounts" in schema["observation"]["properties"]
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/reset", "/step", "/state", "/tasks", "/grader"):
        assert path in paths
    # exactly one handler each for the replaced routes
    methods = [
        (r.path, tuple(sorted(r.methods)))
        for r in client.app.routes
        if getattr(r, "path", None) in ("/reset", "/step", "/state")
    ]
    assert sorted(methods) == [("/reset", ("POST",)), ("/state", ("GET",)), ("/step", ("POST",))]


# --------------------------------------------------------------------------- expiry and cap
class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_cap_and_expiry_over_http() -> None:
    clock = FakeClock()
    registry = EpisodeRegistry(ttl_s=60, max_episodes=2, clock=clock)
    small = TestClient(build_app(ServerSettings(), registry=registry))
    a = small.post("/reset", json={"task": "easy", "seed": 1, "episode_id": "a"})
    b = small.post("/reset", json={"task": "easy", "seed": 2, "episode_id": "b"})
    assert a.status_code == b.status_code == 200
    full = small.post("/reset", json={"task": "easy", "seed": 3, "episode_id": "c"})
    assert full.status_code == 503
    assert full.json()["error"] == "too_many_episodes" and "cap is 2" in full.json()["message"]
    assert small.get("/state", params={"episode_id": "c"}).status_code == 404
    # finishing "a" frees a slot: it is evicted (least recently used finished episode)
    assert (
        small.post("/step", json={"action": {"action_type": "submit"}, "episode_id": "a"}).json()[
            "done"
        ]
        is True
    )
    assert (
        small.post("/reset", json={"task": "easy", "seed": 3, "episode_id": "c"}).status_code == 200
    )
    gone = small.get("/state", params={"episode_id": "a"})
    assert gone.status_code == 404 and "evicted" in gone.json()["message"]
    # idle episodes expire
    clock.now += 61
    expired = small.post("/step", json={"action": {"action_type": "submit"}, "episode_id": "b"})
    assert expired.status_code == 404 and "expired" in expired.json()["message"]


def test_genuine_bugs_are_json_500() -> None:
    app = build_app(ServerSettings())

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("deliberate bug")

    r = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert r.status_code == 500
    assert r.json()["error"] == "internal_error" and "RuntimeError" in r.json()["message"]


def test_replay_helper_agrees_with_trace() -> None:
    """Guards the reference itself: replaying recorded actions reproduces the trace."""
    trace = policy_trace("naive", "easy", 2)
    assert replay_in_process("easy", 2, trace.actions) == trace.observations


def test_settings_come_from_the_environment_and_flags(monkeypatch) -> None:
    from fakegang_env.server.app import parse_args

    monkeypatch.setenv("FAKEGANG_EPISODE_TTL_S", "90")
    monkeypatch.setenv("FAKEGANG_MAX_EPISODES", "7")
    settings = ServerSettings.from_env()
    assert (settings.ttl_s, settings.max_episodes) == (90.0, 7)
    app = build_app(settings)
    assert (app.state.registry.ttl_s, app.state.registry.max_episodes) == (90.0, 7)
    monkeypatch.setenv("FAKEGANG_MAX_EPISODES", "lots")
    with pytest.raises(SystemExit, match="FAKEGANG_MAX_EPISODES"):
        ServerSettings.from_env()
    args = parse_args(["--port", "8123", "--max-episodes", "3", "--episode-ttl", "5"])
    assert (args.host, args.port, args.max_episodes, args.episode_ttl) == (
        "127.0.0.1",
        8123,
        3,
        5.0,
    )
