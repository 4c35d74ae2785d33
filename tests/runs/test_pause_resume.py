"""Pause/step, Ctrl-C and the errors of `runs`/`resume`, in-process.

Every scenario is compared with a reference run of the same settings played without
interruption (`reference`), so "resumed correctly" means "identical to never having stopped".
Replay, fork and prune are test_replay_fork_prune.py.
"""

from __future__ import annotations

import io
import re
import socket
import subprocess
import sys

import httpx
import pytest
from runs_helpers import (
    assert_same_as_reference,
    copy_db,
    options,
    state,
    steps_of,
)

from fakegang.cli.main import main
from fakegang.graph import resources
from fakegang.runs.records import RunRecords
from fakegang.runs.resume import ResumeError, resume_run
from fakegang.runs.runner import episode_thread_id, train
from fakegang.runs.runs import RunsError, collect_runs
from fakegang.tools.env_client import EnvClient
from fakegang.tools.learning import experience
from fakegang.tools.memory.store import Memory


@pytest.fixture
def reference(uninterrupted_run):
    """The uninterrupted run (conftest.py, played once per session)."""
    return uninterrupted_run


# ------------------------------------------------------------------------------ pause / step
def test_pause_before_step_env_then_resume(env_url, tmp_path, reference) -> None:
    opts = options(tmp_path, env_url, pause_before="step_env")
    out = io.StringIO()
    result = train(opts, out=out, stdin=io.StringIO("\n\nq\n"))
    assert result["metrics"] is None
    text = out.getvalue()
    assert text.count("⏸ next: step_env") == 3
    assert f"Paused before step_env: continue with `fakegang resume {result['run_id']}" in text
    run_id = result["run_id"]
    [run] = collect_runs(opts.db, run_id)
    assert run.status == "paused"
    assert [e.status for e in run.episodes] == ["paused", "not started"]
    assert run.episodes[0].outcome == "at action #2, next: step_env"
    tid = episode_thread_id(run_id, 1)
    snap = state(opts.db, tid)
    assert snap.next == ("step_env",) and snap.values["action_count"] == 2
    assert [s["idx"] for s in steps_of(opts.db, tid)] == [0, 1]

    # resume keeps the run's --pause-before: one Enter, then end of input → paused again
    out2 = io.StringIO()
    r2 = resume_run(run_id, db=opts.db, env_url=env_url, out=out2, stdin=io.StringIO("\n"))
    assert r2["status"] == "paused" and out2.getvalue().count("⏸ next: step_env") == 2
    snap = state(opts.db, tid)
    assert snap.next == ("step_env",) and snap.values["action_count"] == 4

    r3 = resume_run(run_id, db=opts.db, env_url=env_url, no_pause=True, out=io.StringIO())
    assert r3["status"] == "finished"
    assert_same_as_reference(opts, run_id, reference)
    [run] = collect_runs(opts.db, run_id)
    assert run.status == "finished" and [e.status for e in run.episodes] == ["finished"] * 2


def test_step_mode_advances_one_node_per_enter(env_url, tmp_path, reference) -> None:
    opts = options(tmp_path, env_url, step=True)
    out = io.StringIO()
    result = train(opts, out=out, stdin=io.StringIO("\n" * 5))  # 5 Enters, then end of input
    run_id, tid = result["run_id"], episode_thread_id(result["run_id"], 1)
    pauses = re.findall(r"⏸ next: (\w+)", out.getvalue())
    assert pauses == ["rule_check", "llm_decide", "arbitrate", "step_env", "observe", "rule_check"]
    ran = re.findall(r"⏸ action #\d+ · (\w+)", out.getvalue())
    assert ran == ["observe", "rule_check", "llm_decide", "arbitrate", "step_env", "observe"]
    snap = state(opts.db, tid)
    assert snap.next == ("rule_check",) and snap.values["action_count"] == 1
    assert collect_runs(opts.db, run_id)[0].status == "paused"

    # `q` at the first pause of the resumed run: exactly one node (rule_check) ran
    r2 = resume_run(
        run_id, db=opts.db, env_url=env_url, out=io.StringIO(), stdin=io.StringIO("q\n")
    )
    assert r2["status"] == "paused"
    assert state(opts.db, tid).next == ("llm_decide",)

    resume_run(run_id, db=opts.db, env_url=env_url, no_pause=True, out=io.StringIO())
    assert_same_as_reference(opts, run_id, reference)


def test_ctrl_c_after_an_env_step_leaves_a_resumable_run(
    env_url, tmp_path, reference, monkeypatch
) -> None:
    """Ctrl-C right after the server applied an action that was not recorded yet."""
    real_step = EnvClient.step
    calls = {"n": 0}
    # inside episode 2: a few actions after episode 1's (as long as the reference played it)
    ref_db, _, ref_run = reference
    stop_at = len(steps_of(ref_db, episode_thread_id(ref_run, 1))) + 3

    def step_then_ctrl_c(self, *args, **kwargs):
        obs = real_step(self, *args, **kwargs)
        calls["n"] += 1
        if calls["n"] == stop_at:
            raise KeyboardInterrupt
        return obs

    monkeypatch.setattr(EnvClient, "step", step_then_ctrl_c)
    opts = options(tmp_path, env_url)
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        train(opts, out=out)
    monkeypatch.setattr(EnvClient, "step", real_step)
    resources.reset_all()
    run_id = RunRecords(Memory(opts.db)).list_runs()[0]["run_id"]
    assert f"Interrupted: resume with `fakegang resume {run_id}" in out.getvalue()
    assert Memory(opts.db).run(run_id)["status"] == "interrupted"
    [run] = collect_runs(opts.db, run_id)
    assert run.status == "interrupted"
    assert [e.status for e in run.episodes] == ["finished", "interrupted"]
    tid = episode_thread_id(run_id, 2)
    pending = state(opts.db, tid)
    assert pending.next == ("step_env",)
    k = pending.values["action_count"]
    assert len(steps_of(opts.db, tid)) == k  # the applied action k is not recorded
    # episode 2 pinned the version episode 1's debrief made, the learner's trees with it: the
    # resumed steps below score with them and end as the reference did
    pinned = experience.get_version(
        Memory(opts.db), pending.values["task"], pending.values["weights_version"]
    )
    assert pinned.version >= 1 and pinned.model is not None

    resume_run(run_id, db=opts.db, env_url=env_url, out=io.StringIO())
    assert_same_as_reference(opts, run_id, reference)
    # the server kept the episode: the repeated action index was answered, not re-applied
    server = httpx.get(f"{env_url}/state", params={"episode_id": tid}).json()
    assert server["action_count"] == len(steps_of(opts.db, tid)) and server["done"]


# ----------------------------------------------------------------------- runs / resume errors
def test_runs_and_resume_refuse_bad_input(reference, tmp_path, capsys) -> None:
    db, _, run_id = reference
    with pytest.raises(RunsError, match="no database"):
        collect_runs(tmp_path / "missing.sqlite")
    with pytest.raises(RunsError, match="unknown run"):
        collect_runs(db, "r-nope")
    with pytest.raises(RunsError, match="unknown run"):
        resume_run("r-nope", db=str(db))
    with pytest.raises(ResumeError, match="is finished: nothing to resume"):
        resume_run(run_id, db=str(db))
    assert main(["resume", "r-nope", "--db", str(db)]) == 2
    assert "unknown run 'r-nope'" in capsys.readouterr().err
    assert main(["runs", "--db", str(tmp_path / "missing.sqlite")]) == 2

    # a run still played by a live process is reported `running` and not resumed twice
    copy = copy_db(db, tmp_path)
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        memory = Memory(copy)
        memory.upsert_run({"run_id": run_id, "status": "running"})
        RunRecords(memory).set_run_owner(run_id, owner.pid, socket.gethostname())
        memory.close()
        assert collect_runs(copy, run_id)[0].status == "running"
        with pytest.raises(ResumeError, match=f"still being played by process {owner.pid}"):
            resume_run(run_id, db=str(copy))
    finally:
        owner.kill()
        owner.wait()
    assert collect_runs(copy, run_id)[0].status == "interrupted"  # its process is gone
