"""The plain-HTTP contract, in-process with FastAPI's TestClient.

Covers the OpenEnv wire shape, statefulness by episode_id, determinism against the in-process
engine, idempotent and out-of-order steps, the default episode, /tasks, /grader, /schema, expiry
and the cap, and every kind of bad input (4xx JSON, state unchanged, never a 500).
"""

from __future__ import annotations

import json
import uuid

import pytest
from env_fixtures import (
    action_body,
    expected_wire,
    policy_trace,
    replay_in_process,
    strip_episode_id,
)
from fastapi.testclient import TestClient

from fakegang_env.engine import Episode
from fakegang_env.models import FakeGangObservation
from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.server.sessions import EpisodeRegistry
from fakegang_env.tasks import TASKS


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(build_app(ServerSettings()), raise_server_exceptions=False)


def reset(client: TestClient, **body) -> dict:
    r = client.post("/reset", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def step(client: TestClient, episode_id: str | None, action, index: int | None = None):
    body: dict = {"action": action_body(action) if isinstance(action, tuple) else action}
    if episode_id is not None:
        body["episode_id"] = episode_id
    if index is not None:
        body["action_index"] = index
    return client.post("/step", json=body)


def state(client: TestClient, episode_id: str | None) -> dict:
    params = {} if episode_id is None else {"episode_id": episode_id}
    r = client.get("/state", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def without_id(wire: dict) -> dict:
    return {**wire, "observation": strip_episode_id(wire["observation"])}


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


# --------------------------------------------------------------------------- bad input
BAD_STEP_BODIES: list[tuple[str, bytes | dict, int]] = [
    ("malformed json", b'{"action": ', 400),
    ("not utf-8", b"\xff\xfe\xfd", 400),
    ("deeply nested", b"[" * 20000 + b"]" * 20000, 400),
    ("huge integer", b'{"action_index": ' + b"9" * 5000 + b"}", 400),
    ("empty body", b"", 422),
    ("json array", b"[]", 422),
    ("json null", b"null", 422),
    ("json string", b'"inspect"', 422),
    ("json number", b"12", 422),
    ("missing action", {"episode_id": "E"}, 422),
    ("action is a string", {"action": "inspect", "episode_id": "E"}, 422),
    (
        "unknown action type",
        {"action": {"action_type": "ban", "account_id": "u_1"}, "episode_id": "E"},
        422,
    ),
    ("action type wrong type", {"action": {"action_type": 3}, "episode_id": "E"}, 422),
    (
        "account id is a number",
        {"action": {"action_type": "inspect", "account_id": 7}, "episode_id": "E"},
        422,
    ),
    (
        "account id is a list",
        {"action": {"action_type": "inspect", "account_id": ["u_1"]}, "episode_id": "E"},
        422,
    ),
    (
        "account id too long",
        {"action": {"action_type": "inspect", "account_id": "u" * 65}, "episode_id": "E"},
        422,
    ),
    (
        "extra key in action",
        {"action": {"action_type": "submit", "why": "x"}, "episode_id": "E"},
        422,
    ),
    (
        "extra top-level key",
        {"action": {"action_type": "submit"}, "episode_id": "E", "force": True},
        422,
    ),
    (
        "negative action index",
        {"action": {"action_type": "submit"}, "episode_id": "E", "action_index": -1},
        422,
    ),
    (
        "string action index",
        {"action": {"action_type": "submit"}, "episode_id": "E", "action_index": "0"},
        422,
    ),
    (
        "float action index",
        {"action": {"action_type": "submit"}, "episode_id": "E", "action_index": 0.5},
        422,
    ),
    (
        "bool action index",
        {"action": {"action_type": "submit"}, "episode_id": "E", "action_index": True},
        422,
    ),
    (
        "nan action index",
        b'{"action": {"action_type": "submit"}, "episode_id": "E", "action_index": NaN}',
        422,
    ),
    ("episode id is a number", {"action": {"action_type": "submit"}, "episode_id": 5}, 422),
    ("unknown episode id", {"action": {"action_type": "submit"}, "episode_id": "nope"}, 404),
    (
        "oversized body",
        {"action": {"action_type": "submit"}, "episode_id": "E", "request_id": "x" * 70_000},
        413,
    ),
]

BAD_RESET_BODIES: list[tuple[str, bytes | dict, int]] = [
    ("malformed json", b'{"task": "easy"', 400),
    ("json array", b'["easy", 1]', 422),
    ("unknown task", {"task": "impossible", "episode_id": "E"}, 422),
    ("task wrong type", {"task": 3, "episode_id": "E"}, 422),
    ("negative seed", {"task": "easy", "seed": -1, "episode_id": "E"}, 422),
    ("string seed", {"task": "easy", "seed": "1", "episode_id": "E"}, 422),
    ("float seed", {"task": "easy", "seed": 1.5, "episode_id": "E"}, 422),
    ("bool seed", {"task": "easy", "seed": True, "episode_id": "E"}, 422),
    ("seed too large", {"task": "easy", "seed": 2**64, "episode_id": "E"}, 422),
    ("infinite seed", b'{"task": "easy", "seed": Infinity, "episode_id": "E"}', 422),
    ("misspelt key", {"task": "easy", "sed": 1, "episode_id": "E"}, 422),
    ("unsafe episode id", {"task": "easy", "episode_id": "E/../x"}, 422),
    ("empty episode id", {"task": "easy", "episode_id": ""}, 422),
    ("episode id too long", {"task": "easy", "episode_id": "e" * 256}, 422),
    ("oversized body", {"task": "easy", "episode_id": "E", "pad": "x" * 70_000}, 413),
]


def _send(client: TestClient, path: str, body: bytes | dict, episode_id: str):
    if isinstance(body, dict):
        raw = json.dumps(body).replace('"E"', json.dumps(episode_id)).encode()
    else:
        raw = body.replace(b'"E"', json.dumps(episode_id).encode())
    return client.post(path, content=raw, headers={"content-type": "application/json"})


@pytest.fixture()
def live_episode(client: TestClient) -> tuple[str, dict]:
    obs = reset(client, task="easy", seed=31)["observation"]
    eid = obs["episode_id"]
    step(client, eid, ("inspect", obs["visible_account_ids"][0]), index=0)
    return eid, state(client, eid)


@pytest.mark.parametrize(
    ("case", "body", "status"), BAD_STEP_BODIES, ids=[c[0] for c in BAD_STEP_BODIES]
)
def test_bad_step_requests_are_4xx_json_and_change_nothing(
    client: TestClient, live_episode: tuple[str, dict], case: str, body, status: int
) -> None:
    eid, before = live_episode
    default_before = client.get("/state").json()
    r = _send(client, "/step", body, eid)
    assert r.status_code == status, (case, r.text)
    payload = r.json()
    assert payload["error"] and isinstance(payload["message"], str) and payload["message"]
    assert state(client, eid) == before
    assert client.get("/state").json() == default_before


@pytest.mark.parametrize(
    ("case", "body", "status"), BAD_RESET_BODIES, ids=[c[0] for c in BAD_RESET_BODIES]
)
def test_bad_reset_requests_are_4xx_json_and_change_nothing(
    client: TestClient, live_episode: tuple[str, dict], case: str, body, status: int
) -> None:
    eid, before = live_episode
    held_before = len(client.app.state.registry)
    default_before = client.get("/state").json()
    r = _send(client, "/reset", body, eid)
    assert r.status_code == status, (case, r.text)
    assert r.json()["error"] and r.json()["message"]
    assert state(client, eid) == before  # the episode named in the bad reset survives
    assert len(client.app.state.registry) == held_before
    assert client.get("/state").json() == default_before


def test_error_messages_say_what_is_wrong(client: TestClient) -> None:
    r = client.post("/reset", json={"task": "impossible"})
    assert "valid tasks: easy, medium, hard" in r.json()["message"]
    r = client.post("/reset", json={"seed": -3})
    assert "seed" in r.json()["message"] and "greater than or equal to 0" in r.json()["message"]
    r = client.post("/step", json={"action": {"action_type": "ban"}})
    assert "inspect" in r.json()["message"] and "submit" in r.json()["message"]
    r = client.post("/step", content=b"{oops", headers={"content-type": "application/json"})
    assert r.json()["message"].startswith("malformed JSON body")
    r = client.get("/state", params={"episode_id": "never-made"})
    assert r.status_code == 404 and "never-made" in r.json()["message"]


def test_chunked_oversized_body_is_413(client: TestClient) -> None:
    def chunks():
        for _ in range(80):
            yield b" " * 1024

    r = client.post("/step", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"] == "body_too_large"


def test_other_bad_requests_are_json_4xx(client: TestClient) -> None:
    cases = [
        client.get("/step"),
        client.get("/no-such-route"),
        client.get("/state", params={"episode_id": "e" * 300}),
        client.post(
            "/step",
            content=b"action=submit",
            headers={"content-type": "application/x-www-form-urlencoded"},
        ),
        client.post("/reset", content=b'{"task": "easy"}', headers={"content-type": "text/plain"}),
    ]
    for r in cases:
        assert 400 <= r.status_code < 500, r.text
        assert r.json()["message"]


def test_no_input_produces_a_500(client: TestClient) -> None:
    """A fuzz-ish sweep of odd bodies and parameters over every route."""
    eid = reset(client, task="easy", seed=40)["observation"]["episode_id"]
    values = [
        None,
        True,
        -1,
        0,
        2**70,
        1.5,
        float("nan"),
        "",
        "x" * 300,
        "\u0000",
        "ü",
        [],
        {},
        [1, "a"],
        {"a": {"b": [None]}},
    ]
    bodies: list[bytes] = [
        b"",
        b"{",
        b"}",
        b"[",
        b"nul",
        b"\x00",
        b'{"action": {}}',
        b'{"action": null}',
        b'{"action": {"action_type": null}}',
    ]
    for v in values:
        for key in ("task", "seed", "episode_id", "action", "action_index", "timeout_s"):
            bodies.append(json.dumps({key: v}).encode())
            bodies.append(
                json.dumps({"action": {"action_type": "inspect", "account_id": v}, key: v}).encode()
            )
        bodies.append(json.dumps({"action": {"action_type": v}, "episode_id": eid}).encode())
        bodies.append(
            json.dumps(
                {"action": {"action_type": "flag", "account_id": v}, "episode_id": eid}
            ).encode()
        )
    for raw in bodies:
        for path in ("/reset", "/step"):
            r = client.post(path, content=raw, headers={"content-type": "application/json"})
            assert r.status_code < 500, (path, raw[:80], r.text)
            assert r.headers["content-type"].startswith("application/json")
    for v in ["", "x" * 300, "%00", "ü", "null"]:
        for path in ("/state", "/grader"):
            assert client.get(path, params={"episode_id": v}).status_code < 500
    # OpenEnv's own routes on the same app
    for raw in bodies[:40]:
        for path in ("/mcp", "/fakegang_env/tasks", "/fakegang_env/task", "/x/num_tasks"):
            r = client.post(path, content=raw, headers={"content-type": "application/json"})
            assert r.status_code < 500 or r.status_code == 501, (path, raw[:80], r.text)
    for path in ("/fakegang_env/splits", "/list_environments", "/schema", "/metadata"):
        assert client.get(path).status_code in (200, 501)


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
