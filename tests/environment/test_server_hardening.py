"""Issue 40, the environment server: a browser page cannot fill it or read it (Host allow-list,
JSON-only state changes), security headers on every response, and `/ws` survives bad frames."""

from __future__ import annotations

import json
import logging

import pytest
from env_fixtures import ThreadedServer
from fastapi.testclient import TestClient

from fakegang_env.server.app import build_app

LOCAL = "http://127.0.0.1"


def served_app(monkeypatch, **env: str):
    """The app as a listening server builds it (settings from the environment)."""
    monkeypatch.delenv("FAKEGANG_ALLOWED_HOSTS", raising=False)
    monkeypatch.delenv("FAKEGANG_ENV_TOKEN", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return build_app()


@pytest.fixture
def client(monkeypatch) -> TestClient:
    app = served_app(monkeypatch, FAKEGANG_MAX_EPISODES="5")
    return TestClient(app, base_url=LOCAL, raise_server_exceptions=False)


def test_cross_origin_simple_posts_cannot_fill_the_server(client) -> None:
    body = json.dumps({"task": "easy", "seed": 1})
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None):
        for _ in range(6):
            headers = {"Origin": "http://evil.example"}
            if kind:
                headers["Content-Type"] = kind
            r = client.post("/reset", content=body, headers=headers)
            assert r.status_code == 415, (kind, r.text)
            assert r.json()["error"] == "unsupported_media_type"
    assert len(client.app.state.registry) == 0
    ok = client.post("/reset", json={"task": "easy", "seed": 1})
    assert ok.status_code == 200
    step = client.post("/step", content=b'{"action": {"action_type": "submit"}}',
                       headers={"Content-Type": "text/plain"})  # fmt: skip
    assert step.status_code == 415


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example"])
def test_a_foreign_host_header_is_refused_redirects_included(client, host) -> None:
    for method, path in (("GET", "/health"), ("GET", "/tasks/"), ("POST", "/reset")):
        r = client.request(method, path, headers={"Host": host}, json={"task": "easy"},
                           follow_redirects=False)  # fmt: skip
        assert r.status_code == 400, (path, r.status_code)
        assert "evil" not in r.headers.get("location", "")
    assert client.get("/health", headers={"Host": "localhost:8000"}).status_code == 200


def test_the_served_app_checks_hosts_by_default(monkeypatch) -> None:
    app = served_app(monkeypatch)  # as `uvicorn fakegang_env.server.app:app`, embedded server
    r = TestClient(app, base_url="http://evil.example").get("/health")
    assert r.status_code == 400
    assert TestClient(app, base_url=LOCAL).get("/health").status_code == 200


def test_allowed_hosts_loopback_bound_and_configured() -> None:
    from fakegang_env.server.security import LOOPBACK_HOSTS, allowed_hosts

    assert allowed_hosts(env={}) == LOOPBACK_HOSTS
    assert "10.1.2.3" in allowed_hosts("10.1.2.3", env={})
    assert "[fd00::1]" in allowed_hosts("fd00::1", env={})
    names = allowed_hosts("127.0.0.1", env={"FAKEGANG_ALLOWED_HOSTS": "env.example, x.test"})
    assert {"env.example", "x.test"} <= set(names)
    assert "evil.example" not in allowed_hosts("0.0.0.0", env={})


def test_security_headers_on_every_response_errors_included(monkeypatch) -> None:
    app = served_app(monkeypatch)

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("deliberate bug")

    client = TestClient(app, base_url=LOCAL, raise_server_exceptions=False)
    responses = {
        "200": client.get("/health"),
        "404": client.get("/state", params={"episode_id": "nope"}),
        "415": client.post("/reset", content=b"{}", headers={"Content-Type": "text/plain"}),
        "422": client.post("/reset", json={"task": "impossible"}),
        "400 host": client.get("/health", headers={"Host": "evil.example"}),
        "500": client.get("/boom"),
    }
    for name, r in responses.items():
        assert r.headers.get("x-content-type-options") == "nosniff", name
        assert "frame-ancestors 'none'" in r.headers.get("content-security-policy", ""), name
        assert r.headers.get("referrer-policy") == "no-referrer", name
    assert responses["500"].status_code == 500


def test_with_a_token_refusals_carry_the_headers_too(monkeypatch) -> None:
    app = served_app(monkeypatch, FAKEGANG_ENV_TOKEN="t" * 32)
    r = TestClient(app, base_url=LOCAL).get("/tasks")
    assert r.status_code == 401 and r.headers.get("x-content-type-options") == "nosniff"


def test_ws_survives_a_non_object_or_binary_frame(monkeypatch) -> None:
    app = served_app(monkeypatch)
    client = TestClient(app, base_url=LOCAL)
    with client.websocket_connect("ws://127.0.0.1/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"task": "easy", "seed": 2}}))
        first = json.loads(ws.receive_text())
        assert first["type"] == "observation"
        for bad in ("[]", "5", '"text"', "null"):
            ws.send_text(bad)
            err = json.loads(ws.receive_text())
            assert err["type"] == "error" and "JSON object" in err["data"]["message"], bad
        ws.send_bytes(b'{"type": "state"}')
        err = json.loads(ws.receive_text())
        assert err["type"] == "error" and "binary" in err["data"]["message"]
        ws.send_text(json.dumps({"type": "state"}))
        state = json.loads(ws.receive_text())
        assert state["type"] == "state"  # the same session, its episode still there
        assert state["data"]["episode_id"] == first["data"]["observation"]["episode_id"]


def test_a_token_in_a_query_never_reaches_the_log() -> None:
    from fakegang_env.server.security import RedactTokens, uvicorn_log_config

    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/runs/x?a=1&token=s3cret-s3cret-s3cret&b=2", "1.1", 303), None,
    )  # fmt: skip
    RedactTokens().filter(record)
    text = record.getMessage()
    assert "s3cret" not in text and "token=***" in text and "b=2" in text
    config = uvicorn_log_config()
    assert all("redact_tokens" in h["filters"] for h in config["handlers"].values())


def test_a_real_server_refuses_a_rebound_host(monkeypatch) -> None:
    import httpx

    with ThreadedServer(served_app(monkeypatch)) as url:
        assert httpx.get(f"{url}/health").status_code == 200
        r = httpx.get(f"{url}/tasks/", headers={"Host": "evil.example"})
        assert r.status_code == 400 and "evil" not in r.headers.get("location", "")


def test_routing_answers_first_and_a_bodiless_post_is_refused(client) -> None:
    """415 is only for a route that takes the method (others stay 405); a POST without a body
    is refused too, else a page could start `/reset`'s default episode."""
    plain = {"Content-Type": "text/plain"}
    assert client.put("/reset", content=b"x", headers=plain).status_code == 405
    assert client.post("/health", content=b"x", headers=plain).status_code == 405
    assert client.post("/reset").status_code == 415
    assert len(client.app.state.registry) == 0
