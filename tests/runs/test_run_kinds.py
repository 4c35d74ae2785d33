"""Memory that belongs to a run kind: evaluation, forks, Studio and Python API runs read the
memory and are recorded (marked by kind) but write nothing later training learns from.

The scenario of a new user: evaluate, fork the evaluation's episode to try a what-if, then
train. The training episodes' lessons, few-shot example and memory counts must come from
training episodes only.
"""

from __future__ import annotations

import io
import sqlite3
import uuid
from pathlib import Path

import pytest
from runs_helpers import options

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.graph import compile_with_sqlite, recursion_limit
from fakegang.runs.evaluation import evaluate
from fakegang.runs.fork import fork_episode
from fakegang.runs.runner import episode_thread_id, train
from fakegang.runs.runs import collect_runs, format_runs
from fakegang.tools.memory.store import Memory

#: Tables keyed by the thread id of the episode that wrote them, which only learning writes:
#: lessons, few-shot example, experience, refits, credit, insight votes.
LEARNING_THREAD_TABLES = (
    "reflections",
    "trajectories",
    "experience",
    "weight_versions",
    "credit",
    "insight_votes",
)


def _query(db: Path, sql: str, args=()) -> list[tuple]:
    conn = sqlite3.connect(str(db))
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _learned_from(db: Path) -> dict[str, set[str]]:
    """Per learning table, the thread ids of the episodes that wrote into it."""
    return {
        t: {r[0] for r in _query(db, f"select distinct thread_id from {t}")}
        for t in LEARNING_THREAD_TABLES
    }


def _kinds(db: Path) -> dict[str, tuple[str, int]]:
    return {t: (k, n) for t, k, n in _query(db, "select thread_id, kind, learns from episodes")}


def test_fork_of_an_evaluation_then_training_learns_from_training_only(env_url, tmp_path) -> None:
    db = tmp_path / "agent.sqlite"
    ev = evaluate(task="hard", seeds=[0], model="fake", db=str(db), env_url=env_url)
    eval_tid = ev["results"][0]["thread_id"]
    resources.reset_all()
    assert all(not threads for threads in _learned_from(db).values())
    assert _query(db, "select count(*) from alpha") == [(0,)]

    steps = Memory(db).steps(eval_tid)
    k = 1
    visible = [s for s in steps if s["action"].startswith("inspect ")]
    assert len(visible) > k
    said = io.StringIO()
    fork = fork_episode(str(db), eval_tid, at=k, action="submit", env_url=env_url, out=said)
    assert "memory   : read only (a what-if teaches training nothing)" in said.getvalue()
    resources.reset_all()
    fork_tid = fork["thread_id"]
    # the what-if is recorded and listed, but it taught the memory nothing
    assert all(not threads for threads in _learned_from(db).values())
    assert _query(db, "select count(*) from alpha") == [(0,)]
    kinds = _kinds(db)
    assert kinds[eval_tid] == ("eval", 0) and kinds[fork_tid] == ("fork", 0)
    fork_row = Memory(db).episode(fork_tid)
    assert fork_row["status"] == "finished" and fork_row["learn_status"] is None

    opts = options(tmp_path, env_url)
    opts.task, opts.episodes = "hard", 3
    out = io.StringIO()
    run_id = train(opts, out=out)["run_id"]
    resources.reset_all()
    train_tids = {episode_thread_id(run_id, i) for i in (1, 2, 3)}
    learned = _learned_from(db)
    assert learned["reflections"] and learned["experience"] and learned["credit"]
    for table, threads in learned.items():
        assert threads <= train_tids, (table, threads - train_tids)
    first = Memory(db).episode(episode_thread_id(run_id, 1))
    # the first training episode found no lesson and no few-shot example: the evaluation and the
    # fork before it left none
    assert first["n_reflections_used"] == 0 and first["had_few_shot"] == 0
    assert {_kinds(db)[t] for t in train_tids} == {("train", 1)}
    memory = Memory(db)
    # memory counts: 3 training episodes learned from, the evaluation and the fork read only
    assert "hard  : episodes=3 (+2 read-only)" in memory.summary()
    assert memory.reflection_count("hard") == len(learned["reflections"])
    assert "hard  : episodes=3 (+2 read-only)" in out.getvalue()
    listing = format_runs(collect_runs(db))
    assert eval_tid in listing and fork_tid in listing


def _play(ctx: Context, db: Path) -> tuple[str, dict]:
    app = compile_with_sqlite(db)
    thread_id = str(uuid.uuid4())
    cfg = {"configurable": {"thread_id": thread_id}, "recursion_limit": recursion_limit(30)}
    out = app.invoke({"task": "easy", "seed": 2}, cfg, context=ctx, durability="sync")
    app.checkpointer.conn.close()
    return thread_id, out


def test_python_api_reads_the_memory_and_learns_only_when_asked(env_url, tmp_path) -> None:
    db = tmp_path / "agent.sqlite"
    api = Context(env_url=env_url, db_path=str(db), model="fake")
    assert (api.run_kind, api.learn) == ("api", False)
    tid, out = _play(api, db)
    resources.reset_all()
    assert out["result"]["learn_status"] == "api: memory read only, nothing learned"
    assert all(not threads for threads in _learned_from(db).values())
    assert _kinds(db)[tid] == ("api", 0)
    assert Memory(db).episode(tid)["status"] == "finished"

    asked = Context(env_url=env_url, db_path=str(db), model="fake", learn=True)
    tid2, _ = _play(asked, db)
    resources.reset_all()
    assert _kinds(db)[tid2] == ("api", 1)
    assert _learned_from(db)["reflections"] == {tid2}
    listing = format_runs(collect_runs(db))
    assert "episodes outside any CLI run, played by the Python API" in listing


def test_studio_sets_kind_and_learn_through_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("FAKEGANG_RUN_KIND", "studio")
    monkeypatch.setenv("FAKEGANG_LEARN", "0")
    ctx = Context()
    assert (ctx.run_kind, ctx.learn) == ("studio", False)
    monkeypatch.setenv("FAKEGANG_LEARN", "1")
    assert Context().learn is True


def test_unknown_run_kind_is_refused(monkeypatch) -> None:
    with pytest.raises(ValueError, match="run_kind must be one of"):
        Context(run_kind="party")
    monkeypatch.setenv("FAKEGANG_RUN_KIND", "holiday")
    with pytest.raises(ValueError, match="holiday"):
        Context()
