"""Bad input over plain HTTP: every kind of malformed, mistyped or oversized request is a 4xx
JSON answer that names what is wrong and changes nothing, and no input produces a 500.

Split from test_server_http.py (the contract itself); both use tests/helpers/http_helpers.py.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from http_helpers import make_client, reset, state, step


@pytest.fixture(scope="module")
def client() -> TestClient:
    return make_client()


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
