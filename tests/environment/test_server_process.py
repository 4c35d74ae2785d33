"""The server as a real process (`python -m fakegang_env.cli env serve --port N`) on 127.0.0.1,
driven with httpx (many concurrent episodes in threads) and with OpenEnv's client over /ws."""

from __future__ import annotations

import threading

import httpx
import pytest
from env_fixtures import (
    ServerProcess,
    action_body,
    expected_wire,
    free_port,
    policy_trace,
    strip_episode_id,
)

N_CONCURRENT = 10


@pytest.fixture(scope="module")
def server() -> ServerProcess:
    port = free_port()
    with ServerProcess(
        ["-m", "fakegang_env.cli", "env", "serve", "--port", str(port), "--log-level", "info"], port
    ) as proc:
        yield proc
        assert "unhandled error" not in proc.log()


def play(base_url: str, task: str, seed: int, policy: str, out: dict, key: int) -> None:
    trace = policy_trace(policy, task, seed)
    got = []
    with httpx.Client(base_url=base_url, timeout=60.0) as http:
        r = http.post("/reset", json={"task": task, "seed": seed})
        r.raise_for_status()
        eid = r.json()["observation"]["episode_id"]
        got.append(r.json())
        index = 0
        for action in trace.actions:
            r = http.post(
                "/step",
                json={"action": action_body(action), "episode_id": eid, "action_index": index},
            )
            r.raise_for_status()
            got.append(r.json())
            index = r.json()["observation"]["action_count"]
    out[key] = (eid, trace, got)


def test_binds_loopback_by_default(server: ServerProcess) -> None:
    assert f"Uvicorn running on http://127.0.0.1:{server.port}" in server.log()


def test_concurrent_http_episodes_match_solo_play(server: ServerProcess) -> None:
    specs = [
        ("easy", 50 + k % 3, "random") if k % 2 else ("medium", 60 + k % 4, "naive")
        for k in range(N_CONCURRENT)
    ]
    specs[0] = ("hard", 5, "naive")
    out: dict = {}
    threads = [
        threading.Thread(target=play, args=(server.base_url, t, s, p, out, k))
        for k, (t, s, p) in enumerate(specs)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert sorted(out) == list(range(N_CONCURRENT)), "some episode did not finish"
    ids = set()
    for eid, trace, got in out.values():
        ids.add(eid)
        assert all(g["observation"]["episode_id"] == eid for g in got)
        want = [expected_wire(o) for o in trace.observations]
        assert [{**g, "observation": strip_episode_id(g["observation"])} for g in got] == [
            {**w, "observation": strip_episode_id(w["observation"])} for w in want
        ]
        assert got[-1]["done"] is True
    assert len(ids) == N_CONCURRENT


def test_retries_bad_requests_and_keepalive(server: ServerProcess) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30.0) as http:
        obs = http.post("/reset", json={"task": "easy", "seed": 3}).json()["observation"]
        eid = obs["episode_id"]
        body = {
            "action": {"action_type": "inspect", "account_id": obs["visible_account_ids"][0]},
            "episode_id": eid,
            "action_index": 0,
        }
        first = http.post("/step", json=body)
        retry = http.post("/step", json=body)
        assert first.status_code == retry.status_code == 200
        assert retry.content == first.content and retry.headers["x-fakegang-replayed"] == "true"
        assert http.post("/step", json={**body, "action_index": 4}).status_code == 409
        assert http.post("/reset", json={"task": "nope"}).status_code == 422
        assert (
            http.post(
                "/step", content=b"{", headers={"content-type": "application/json"}
            ).status_code
            == 400
        )
        big = http.post(
            "/step", content=b" " * 100_000, headers={"content-type": "application/json"}
        )
        assert big.status_code == 413 and big.json()["error"] == "body_too_large"
        st = http.get("/state", params={"episode_id": eid})
        assert st.status_code == 200 and st.json()["action_count"] == 1
        assert http.get("/tasks").status_code == 200
        assert http.get("/grader", params={"episode_id": eid}).status_code == 409


def test_openenv_client_over_ws_against_the_process(server: ServerProcess) -> None:
    from fakegang_env.client import FakeGangEnv
    from fakegang_env.models import FakeGangAction

    with FakeGangEnv(base_url=server.base_url).sync() as env:
        r = env.reset(task="hard", seed=1)
        assert r.observation.task == "hard" and len(r.observation.visible_account_ids) == 12
        r = env.step(FakeGangAction(action_type="submit"))
        assert r.done is True and r.observation.grader_score is not None


def test_openenv_validate_url_passes(server: ServerProcess) -> None:
    """OpenEnv's own runtime check of a served environment (6 criteria)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    openenv_cli = Path(sys.executable).parent / "openenv"
    out = subprocess.run(
        [str(openenv_cli), "validate", "--url", server.base_url, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(out.stdout)
    assert report["passed"] is True, report["summary"]
    assert report["summary"]["passed_count"] == report["summary"]["total_count"]
