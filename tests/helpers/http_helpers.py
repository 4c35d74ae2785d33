"""Plain-HTTP helpers shared by the server's TestClient tests (test_server_http.py,
test_server_bad_input.py): reset, step and state that check the status where a test expects 200.
"""

from __future__ import annotations

from env_fixtures import action_body, strip_episode_id
from fastapi.testclient import TestClient

from fakegang_env.server.app import ServerSettings, build_app


def make_client() -> TestClient:
    """An in-process app on default settings; server errors come back as responses."""
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
