"""Replay (playback without env or LLM), fork and prune, in-process.

Compared with a reference run of the same settings played without interruption (`reference`).
Pause, step and resume are test_pause_resume.py.
"""

from __future__ import annotations

import io
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from runs_helpers import (
    checkpoint_count,
    copy_db,
    memory_tables,
    state,
    steps_of,
)

from fakegang.graph import resources
from fakegang.graph.graph import compile_with_sqlite
from fakegang.runs.fork import ForkError, find_fork_point, fork_episode
from fakegang.runs.prune import PruneError, prune
from fakegang.runs.records import RunRecords
from fakegang.runs.replay import ReplayError, head_branch, replay
from fakegang.runs.resume import resume_run
from fakegang.runs.runner import episode_thread_id
from fakegang.runs.runs import collect_runs, format_runs
from fakegang.tools.env_client import EnvClient
from fakegang.tools.learning import experience
from fakegang.tools.memory.store import Memory

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def reference(uninterrupted_run):
    """The uninterrupted run (conftest.py, played once per session)."""
    return uninterrupted_run


# ------------------------------------------------------------------------------------ replay
def test_replay_is_a_playback_without_env_or_llm(reference, monkeypatch) -> None:
    db, _, run_id = reference
    tid = episode_thread_id(run_id, 2)
    steps = steps_of(db, tid)
    row = Memory(db).episode(tid)
    checkpoints_before = checkpoint_count(db, tid)

    def forbidden(*args, **kwargs):
        raise AssertionError("replay tried to reach the network, the environment or a model")

    monkeypatch.setattr(socket.socket, "connect", forbidden)
    monkeypatch.setattr(socket, "create_connection", forbidden)
    monkeypatch.setattr(resources, "env_client", forbidden)
    monkeypatch.setattr(resources, "chat_model", forbidden)
    monkeypatch.setenv("FAKEGANG_ENV_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("FAKEGANG_MODEL", "no-such-provider:no-such-model")
    out = io.StringIO()
    n = replay(db, tid, out=out)
    text = out.getvalue()

    assert n == len(steps)
    assert re.findall(r"^  arbitrate +\S+ → (.+) \(α", text, re.M) == [s["action"] for s in steps]
    modes = re.findall(r"^  arbitrate +(\S+) →", text, re.M)
    assert modes == [s["mode"] for s in steps]
    confidences = re.findall(r"^  rule_check +proposes .+? \(confidence (\d\.\d\d)\)", text, re.M)
    assert confidences == [f"{s['rule_confidence']:.2f}" for s in steps]
    rewards = re.findall(r"^  step_env +reward ([+-]\d+\.\d\d)", text, re.M)
    assert rewards == [f"{s['reward']:+.2f}" for s in steps]
    llm_lines = re.findall(r"^  llm_decide +(skipped|proposes|error)", text, re.M)
    assert len(llm_lines) == len(steps)
    assert [x == "skipped" for x in llm_lines] == [s["llm_status"] == "skipped" for s in steps]
    assert text.count("  observe     saw ") == len(steps)
    verdict = "WIN" if row["won"] else "LOSS"
    reward = re.escape(f"{row['reward']:+.2f}")
    assert re.search(rf"^  reflect +{verdict} reward {reward}", text, re.M)
    assert checkpoint_count(db, tid) == checkpoints_before  # nothing re-executed or written


def test_replay_cli_step_mode_and_errors(reference, tmp_path) -> None:
    db, _, run_id = reference
    tid = episode_thread_id(run_id, 1)
    env = {
        "FAKEGANG_ENV_URL": "http://127.0.0.1:9",  # nothing listens there
        "FAKEGANG_MODEL": "no-such-provider:no-such-model",
        "PATH": "/usr/bin:/bin",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "fakegang.cli.main", "replay", tid, "--db", str(db), "--step"],
        cwd=REPO,
        input="\nq\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("── action #") == 2 and "stopped" in proc.stdout

    with pytest.raises(ReplayError, match="no checkpoints for thread"):
        replay(db, "00000000-0000-0000-0000-000000000000", out=io.StringIO())
    with pytest.raises(ReplayError, match="no database"):
        replay(tmp_path / "missing.sqlite", tid, out=io.StringIO())
    assert not (tmp_path / "missing.sqlite").exists()


# -------------------------------------------------------------------------------------- fork
def _other_action(db: Path, tid: str, k: int) -> str:
    app = compile_with_sqlite(db)
    chain, _ = head_branch(app, tid)
    app.checkpointer.conn.close()
    fp = find_fork_point(chain, k)
    original = fp.values["decision"]["action"]
    for account, _score in fp.values["view"]["top_frontier"]:
        if f"inspect {account}" != original:
            return f"inspect {account}"
    raise AssertionError("no alternative action at the fork point")


def _thread_count(db: Path) -> int:
    conn = sqlite3.connect(str(db))
    try:
        return conn.execute("select count(distinct thread_id) from checkpoints").fetchone()[0]
    finally:
        conn.close()


def test_fork_plays_a_new_branch_and_keeps_the_original(reference, env_url, tmp_path) -> None:
    db = copy_db(reference[0], tmp_path)
    run_id = reference[2]
    tid, k = episode_thread_id(run_id, 1), 3
    action = _other_action(db, tid, k)
    orig_steps = steps_of(db, tid)
    orig_checkpoints = checkpoint_count(db, tid)
    orig_final = state(db, tid).values

    out = io.StringIO()
    result = fork_episode(str(db), tid, at=k, action=action, env_url=env_url, out=out)
    fork_tid = result["thread_id"]
    resources.reset_all()

    fork_steps = steps_of(db, fork_tid)
    strip = [{k2: v for k2, v in s.items() if k2 != "thread_id"} for s in fork_steps]
    assert strip[:k] == [
        {k2: v for k2, v in s.items() if k2 != "thread_id"} for s in orig_steps[:k]
    ]
    assert fork_steps[k]["action"] == action and fork_steps[k]["mode"] == "fork"
    assert orig_steps[k]["action"] != action
    # the original branch is intact
    assert steps_of(db, tid) == orig_steps
    assert checkpoint_count(db, tid) == orig_checkpoints
    assert state(db, tid).values == orig_final
    # the fork ran to its end on its own env episode
    fork_state = state(db, fork_tid)
    assert fork_state.next == () and "result" in fork_state.values
    server = httpx.get(f"{env_url}/state", params={"episode_id": fork_tid}).json()
    assert server["done"] and server["action_count"] == len(fork_steps)
    # both are listed
    listing = format_runs(collect_runs(db))
    assert tid in listing and fork_tid in listing
    assert f"└ fork at action #{k} ({action}, was {orig_steps[k]['action']})" in listing
    parent_text, fork_text = io.StringIO(), io.StringIO()
    replay(db, tid, out=parent_text)
    replay(db, fork_tid, out=fork_text)
    assert f"forked at action #{k} ({action}) → {fork_tid}" in parent_text.getvalue()
    assert f"fork of {tid} at action #{k}: {action} instead of" in fork_text.getvalue()
    assert f"  fork        FORK → {action}" in fork_text.getvalue()
    # the fork is not part of the parent run's episodes
    assert [e.thread_id for e in collect_runs(db, run_id)[0].episodes] == [
        episode_thread_id(run_id, i) for i in (1, 2)
    ]


def test_an_interrupted_fork_resumes_to_the_same_end(
    reference, env_url, tmp_path, monkeypatch
) -> None:
    db = copy_db(reference[0], tmp_path)
    # episode 2: it pinned the version episode 1's debrief made, the learner's trees with it
    tid, k = episode_thread_id(reference[2], 2), 4
    pinned = state(db, tid).values
    version = experience.get_version(Memory(db), pinned["task"], pinned["weights_version"])
    assert version.model is not None
    action = _other_action(db, tid, k)
    clean = fork_episode(str(db), tid, at=k, action=action, env_url=env_url, out=io.StringIO())
    resources.reset_all()

    real_step = EnvClient.step
    calls = {"n": 0}

    def ctrl_c_on_third_step(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == k + 3:  # k replayed actions, the fork action, then one more
            raise KeyboardInterrupt
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(EnvClient, "step", ctrl_c_on_third_step)
    with pytest.raises(KeyboardInterrupt):
        fork_episode(str(db), tid, at=k, action=action, env_url=env_url, out=io.StringIO())
    monkeypatch.setattr(EnvClient, "step", real_step)
    resources.reset_all()
    [fork_run] = [r for r in collect_runs(db) if r.fork_of and r.status == "interrupted"]
    fork_tid = fork_run.episodes[0].thread_id
    assert fork_run.episodes[0].status == "interrupted"
    # a fresh env server would not know the fork's env episode: resume on a new embedded one
    result = resume_run(fork_run.run_id, db=str(db), env_url=None, out=io.StringIO())
    assert result["status"] == "finished"
    strip = [
        [{x: v for x, v in s.items() if x not in ("thread_id", "llm_latency_s")} for s in rows]
        for rows in (steps_of(db, fork_tid), steps_of(db, clean["thread_id"]))
    ]
    assert strip[0] == strip[1] and strip[0][k]["action"] == action
    assert collect_runs(db, fork_run.run_id)[0].status == "finished"


@pytest.mark.parametrize(
    ("at", "action", "message"),
    [
        (999, "submit", "out of range"),
        (-1, "submit", "out of range"),
        (3, "jump u_1", "not an action"),
        (3, "flag u_000000", "is not visible at that point"),
        (3, None, "is what the original branch played"),
        (3, "pivot u_1 shoe_size", "unknown trace"),
        (3, "pivot u_1", "needs an account id and a trace"),
        (0, "pivot-uninspected", "was not inspected at that point"),
    ],
)
def test_fork_refuses_bad_requests_and_creates_nothing(
    reference, env_url, tmp_path, at, action, message
) -> None:
    db = copy_db(reference[0], tmp_path)
    tid = episode_thread_id(reference[2], 1)
    if action is None:
        action = steps_of(db, tid)[at]["action"]
    elif action == "pivot-uninspected":  # visible at the start, inspected only by action 0
        action = f"pivot {steps_of(db, tid)[0]['action'].split()[1]} ip"
    threads, runs = _thread_count(db), len(RunRecords(Memory(db)).list_runs())
    with pytest.raises(ForkError, match=message):
        fork_episode(str(db), tid, at=at, action=action, env_url=env_url, out=io.StringIO())
    resources.reset_all()
    assert _thread_count(db) == threads and len(RunRecords(Memory(db)).list_runs()) == runs
    with pytest.raises(ForkError, match="no checkpoints for thread"):
        fork_episode(str(db), "no-such-thread", at=0, action="submit", env_url=env_url)


# ------------------------------------------------------------------------------------- prune
def db_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def test_prune_keeps_final_states_and_memory(reference, tmp_path) -> None:
    db = copy_db(reference[0], tmp_path)
    run_id = reference[2]
    old, recent = episode_thread_id(run_id, 1), episode_thread_id(run_id, 2)
    tables_before = memory_tables(db, run_id)
    finals = {t: state(db, t).values for t in (old, recent)}
    recent_checkpoints = checkpoint_count(db, recent)
    size_before = db_bytes(db)

    report = prune(db, keep_last=1)
    assert report.episodes_pruned == 1 and report.episodes_kept_full == 1
    assert report.checkpoints_deleted > 100
    assert db_bytes(db) < size_before and report.bytes_after < report.bytes_before
    assert checkpoint_count(db, old) == 1
    assert checkpoint_count(db, recent) == recent_checkpoints
    for t in (old, recent):  # final states still readable
        snap = state(db, t)
        assert snap.next == () and snap.values == finals[t]
    assert memory_tables(db, run_id) == tables_before

    text = io.StringIO()
    assert replay(db, old, out=text) == 0
    row = Memory(db).episode(old)
    assert "history pruned: only the final checkpoint is kept" in text.getvalue()
    assert re.search(rf"reflect +{'WIN' if row['won'] else 'LOSS'} reward", text.getvalue())
    assert replay(db, recent, out=io.StringIO()) == len(steps_of(db, recent))
    assert prune(db, keep_last=1).episodes_pruned == 0  # idempotent
    assert [e.status for e in collect_runs(db, run_id)[0].episodes] == ["finished"] * 2

    with pytest.raises(PruneError, match=">= 0"):
        prune(db, keep_last=-1)
    with pytest.raises(PruneError, match="no database"):
        prune(tmp_path / "missing.sqlite", keep_last=1)
