"""Bearer-token auth on the environment server, the bind rule, and clients passing the token."""

from __future__ import annotations

import dataclasses

import httpx
import pytest
from env_fixtures import ThreadedServer

from fakegang.cli.main import main as fakegang_main
from fakegang.tools.env_client import EnvClient, EnvError
from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.server.app import main as serve_main
from fakegang_env.server.auth import (
    TOKEN_ENV,
    InsecureBindError,
    authorized,
    check_bind,
    is_loopback,
)

TOKEN = "s3cret-token-for-tests-0123456789"
PROTECTED = [
    ("POST", "/reset", {"task": "easy", "seed": 1}),
    ("POST", "/step", {"action": {"action_type": "submit"}}),
    ("GET", "/state", None),
    ("GET", "/grader", None),
    ("GET", "/tasks", None),
    ("GET", "/schema", None),
    ("GET", "/metadata", None),
    ("GET", "/openapi.json", None),
    ("GET", "/docs", None),
]


@pytest.fixture(scope="module")
def token_server():
    settings = dataclasses.replace(ServerSettings(), token=TOKEN)
    with ThreadedServer(build_app(settings)) as url:
        yield url


@pytest.fixture(scope="module")
def open_server():
    with ThreadedServer(build_app(ServerSettings())) as url:
        yield url


@pytest.mark.parametrize("method,route,body", PROTECTED, ids=[p[1] for p in PROTECTED])
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": f"Basic {TOKEN}"}],
    ids=["no-token", "wrong-token", "wrong-scheme"],
)
def test_every_route_but_health_needs_the_token(token_server, method, route, body, headers):
    r = httpx.request(method, token_server + route, json=body, headers=headers, timeout=30)
    assert r.status_code == 401
    assert r.headers["content-type"] == "application/json"
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["error"] == "unauthorized" and "Bearer" in r.json()["message"]


def test_health_is_open_and_the_right_token_works(token_server):
    assert httpx.get(token_server + "/health").status_code == 200
    auth = {"Authorization": f"Bearer {TOKEN}"}
    r = httpx.post(token_server + "/reset", json={"task": "easy", "seed": 3}, headers=auth)
    assert r.status_code == 200
    eid = r.json()["observation"]["episode_id"]
    r = httpx.get(token_server + "/state", params={"episode_id": eid}, headers=auth)
    assert r.status_code == 200 and r.json()["seed"] == 3
    doc = httpx.get(token_server + "/openapi.json", headers=auth).json()
    assert doc["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert "401" in doc["paths"]["/reset"]["post"]["responses"]
    assert "security" not in doc["paths"]["/health"]["get"]


def test_the_agent_client_sends_the_token_from_the_environment(token_server, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with EnvClient(token_server, retries=0) as client, pytest.raises(EnvError) as info:
        client.reset("easy", 0)
    assert info.value.status == 401 and TOKEN_ENV in str(info.value)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with EnvClient(token_server, retries=0) as client:
        obs = client.reset("easy", 0)
        assert client.state(obs.episode_id)["task"] == "easy"


def test_the_openenv_client_sends_the_token(token_server, monkeypatch):
    from fakegang_env.client import FakeGangEnv

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(ConnectionError), FakeGangEnv(base_url=token_server).sync() as env:
        env.reset(task="easy", seed=0)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with FakeGangEnv(base_url=token_server).sync() as env:
        result = env.reset(task="easy", seed=0)
        assert result.observation.task == "easy"


def test_env_url_with_a_wrong_token_is_one_line_before_any_work(
    token_server, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv(TOKEN_ENV, "not-the-token-0123456789")
    db = tmp_path / "x.sqlite"
    argv = ["eval", "--task", "easy", "--seeds", "0-0", "--model", "fake", "--db", str(db)]
    rc = fakegang_main([*argv, "--env-url", token_server])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "401" in err and TOKEN_ENV in err
    assert not db.exists()


def test_loopback_default_is_unchanged(open_server, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert httpx.post(open_server + "/reset", json={"task": "easy", "seed": 1}).status_code == 200
    doc = httpx.get(open_server + "/openapi.json").json()
    assert "securitySchemes" not in doc.get("components", {})
    assert "401" not in doc["paths"]["/reset"]["post"]["responses"]


def test_bind_rule():
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert is_loopback(host)
        check_bind(host, None, False)
    for host in ("0.0.0.0", "::", "192.168.1.10"):
        assert not is_loopback(host)
        with pytest.raises(InsecureBindError, match="--insecure"):
            check_bind(host, None, False)
        check_bind(host, TOKEN, False)
        check_bind(host, None, True)


def test_serve_refuses_an_open_non_loopback_bind(monkeypatch, capsys):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert serve_main(["--host", "0.0.0.0", "--port", "8999"]) == 2
    err = capsys.readouterr().err
    assert "refusing to bind" in err and "--token" in err and "--insecure" in err
    assert serve_main(["--token", "short", "--port", "8999"]) == 2
    assert "at least 16 characters" in capsys.readouterr().err


def test_studio_refuses_an_open_non_loopback_bind(tmp_path, capsys):
    rc = fakegang_main(["studio", "--host", "0.0.0.0", "--db", str(tmp_path / "s.sqlite")])
    assert rc == 2 and "--insecure" in capsys.readouterr().err


def test_authorized_compares_the_whole_token():
    expected = TOKEN.encode()
    assert authorized(f"Bearer {TOKEN}".encode(), expected)
    assert authorized(f"bearer {TOKEN}".encode(), expected)
    assert not authorized(f"Bearer {TOKEN[:-1]}".encode(), expected)
    assert not authorized(f"Bearer {TOKEN}x".encode(), expected)
    assert not authorized(b"Bearer ", expected)
    assert not authorized(None, expected)
