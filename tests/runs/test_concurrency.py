"""Concurrency: 16 episodes at once over HTTP equal the same seeds alone; two trainings share
one database without losing or doubling a row."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from env_fixtures import ServerProcess, action_body, free_port, policy_trace

REPO = Path(__file__).resolve().parents[2]
N_EPISODES = 16


def _play(base_url: str, task: str, seed: int, actions, episode_id: str) -> list[dict]:
    """Every wire response of one episode (reset first), with its own keep-alive client."""
    with httpx.Client(base_url=base_url, timeout=120.0) as http:
        r = http.post("/reset", json={"task": task, "seed": seed, "episode_id": episode_id})
        assert r.status_code == 200, r.text
        out = [r.json()]
        for index, action in enumerate(actions):
            body = {"action": action_body(action), "episode_id": episode_id, "action_index": index}
            r = http.post("/step", json=body)
            assert r.status_code == 200, r.text
            out.append(r.json())
    return out


def _without_id(responses: list[dict]) -> list[dict]:
    return [
        {**r, "observation": {k: v for k, v in r["observation"].items() if k != "episode_id"}}
        for r in responses
    ]


@pytest.fixture(scope="module")
def server_url():
    port = free_port()
    argv = ["-m", "fakegang_env.server.app", "--port", str(port), "--log-level", "warning"]
    with ServerProcess(argv, port) as server:
        yield server.base_url


def test_sixteen_concurrent_episodes_equal_each_seed_played_alone(server_url) -> None:
    tasks = ["hard", "medium", "easy", "hard"] * 4
    traces = [policy_trace("naive", tasks[i], seed=i) for i in range(N_EPISODES)]
    alone = [
        _play(server_url, t.task, t.seed, t.actions, f"alone-{i}") for i, t in enumerate(traces)
    ]
    with ThreadPoolExecutor(max_workers=N_EPISODES) as pool:
        together = list(
            pool.map(
                lambda it: _play(server_url, it[1].task, it[1].seed, it[1].actions, f"c-{it[0]}"),
                enumerate(traces),
            )
        )
    for i, (a, b) in enumerate(zip(alone, together, strict=True)):
        assert len(a) == len(traces[i].actions) + 1
        assert _without_id(a) == _without_id(b), f"episode {i} ({traces[i].task}) differs"
        assert b[-1]["observation"]["episode_id"] == f"c-{i}"
    assert any(r[-1]["done"] for r in together)  # the naive policy plays to the end


def _train(db: Path, log_dir: Path) -> subprocess.Popen:
    argv = [sys.executable, "train.py", "--task", "easy", "--episodes", "3", "--model", "fake"]
    argv += ["--db", str(db), "--log-dir", str(log_dir)]
    return subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_trainings_on_one_database_lose_and_double_nothing(tmp_path) -> None:
    db = tmp_path / "shared.sqlite"
    procs = [_train(db, tmp_path / f"runs{i}") for i in (1, 2)]
    outputs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err[-3000:]

    metrics = [
        [json.loads(x) for x in (tmp_path / f"runs{i}" / "metrics.jsonl").read_text().splitlines()]
        for i in (1, 2)
    ]
    run_ids = {rows[0]["run_id"] for rows in metrics}
    assert len(run_ids) == 2

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("select count(*) from runs").fetchone() == (2,)
    assert {r[0] for r in conn.execute("select status from runs")} == {"finished"}
    for rows in metrics:
        run_id = rows[0]["run_id"]
        episodes = conn.execute(
            "select episode, thread_id, steps_used from episodes where run_id = ? order by episode",
            [run_id],
        ).fetchall()
        assert [e[0] for e in episodes] == [1, 2, 3]  # none lost, none doubled
        assert [e[1] for e in episodes] == [r["thread_id"] for r in rows]
        for (_, thread_id, _), row in zip(episodes, rows, strict=True):
            idx = [
                r[0]
                for r in conn.execute(
                    "select idx from steps where thread_id = ? order by idx", [thread_id]
                )
            ]
            assert len(idx) == len(row["action_log"])  # one steps row per action
            assert idx == sorted(set(idx))
            (n_checkpoints,) = conn.execute(
                "select count(*) from checkpoints where thread_id = ?", [thread_id]
            ).fetchone()
            assert n_checkpoints > 0
    (total,) = conn.execute("select count(*) from episodes").fetchone()
    assert total == 6
