"""Evaluation in worker processes: identical to sequential play, recorded once in the main DB
through shards, a SIGKILLed worker's episode played again, clear errors for bad settings."""

from __future__ import annotations

import sqlite3
import sys

import pytest
from scale_helpers import copy_db, duplicates, recorded, sequential_eval, trained_memory

from fakegang.cli.main import main
from fakegang.runs import shards
from fakegang.runs.evaluation import EvalError, comparable, evaluate
from fakegang.runs.worker import KILL_ENV_VAR, EpisodeJob, play_episode

SEEDS = list(range(6))


@pytest.fixture(scope="module")
def memory_db(tmp_path_factory, env_url):
    return trained_memory(tmp_path_factory.mktemp("scale_mem"), env_url)


@pytest.fixture(scope="module")
def sequential(memory_db, env_url, tmp_path_factory):
    return sequential_eval(memory_db, env_url, tmp_path_factory.mktemp("seq") / "seq.sqlite", SEEDS)


def test_worker_processes_equal_sequential_and_record_every_episode(
    sequential, memory_db, tmp_path
):
    seq_db, seq = sequential
    db = copy_db(memory_db, tmp_path / "pool.sqlite")
    res = evaluate(task="easy", seeds=SEEDS, model="fake", db=db, concurrency=2)
    assert res["errors"] == 0 and res["backend"] == "local (2 worker processes)"
    assert comparable(res["results"]) == comparable(seq["results"])
    assert all(r["action_log"] for r in res["results"])  # action logs compared too
    assert len({r["worker"]["pid"] for r in res["results"]}) == 2  # two processes played
    # the main DB holds what sequential play recorded: outcome, steps, checkpoints
    assert recorded(db, res["run_id"]) == recorded(seq_db, seq["run_id"])
    assert len(recorded(db, res["run_id"])) == len(SEEDS) and duplicates(db) == 0
    from fakegang.runs.runs import collect_runs

    run = next(r for r in collect_runs(db) if r.run_id == res["run_id"])
    assert run.status == "finished" and run.finished == len(SEEDS)


def test_merging_a_shard_twice_records_it_once(memory_db, env_url, tmp_path):
    snapshot = shards.memory_snapshot(memory_db)
    job = EpisodeJob("eval-merge", 1, "easy", 3, "fake", env_url)
    outcome = play_episode(job, snapshot)
    assert outcome.shard is not None and "error" not in outcome.row
    main_db = copy_db(memory_db, tmp_path / "main.sqlite")
    first = shards.merge_shard_bytes(main_db, outcome.shard, tmp_path)
    before = recorded(main_db, "eval-merge")
    again = play_episode(job, snapshot)  # a retry: same thread id, a new shard
    second = shards.merge_shard_bytes(main_db, again.shard, tmp_path)
    assert first.threads == second.threads == (outcome.row["thread_id"],)
    assert first.rows == second.rows > 0
    assert recorded(main_db, "eval-merge") == before and len(before) == 1
    assert duplicates(main_db) == 0
    # the memory's learned tables are untouched by an eval merge
    conn = sqlite3.connect(main_db)
    assert conn.execute("select count(*) from reflections").fetchone()[0] == len(
        sqlite3.connect(memory_db).execute("select * from reflections").fetchall()
    )


def test_a_shard_starts_with_the_whole_memory_learned_tables_included(memory_db, tmp_path):
    """Workers decide with the learned weights, credit and insights of the memory they copy."""
    shard = shards.write_shard(shards.memory_snapshot(memory_db), tmp_path / "shard.sqlite")
    for table in shards.MEMORY_TABLES:
        query = f"select * from {table} order by rowid"
        expected = sqlite3.connect(memory_db).execute(query).fetchall()
        assert sqlite3.connect(shard).execute(query).fetchall() == expected, table
    learned = sqlite3.connect(shard).execute("select count(*) from weight_versions").fetchone()[0]
    assert learned > 0  # the training behind memory_db refit at least once


def test_a_worker_pins_the_trace_yields_the_main_memory_would(memory_db, tmp_path):
    """The yields an episode pins come from the debriefed pivots: a shard holds them too, so an
    episode a worker plays pivots as the same episode played locally."""
    from fakegang.graph.context import Context
    from fakegang.graph.learning import pinned_at_start
    from fakegang.tools.learning import trace_yields
    from fakegang.tools.memory.store import Memory

    db = copy_db(memory_db, tmp_path / "yields.sqlite")
    memory = Memory(db)
    try:
        seen = {"creation": trace_yields.TraceRecord("creation", 3, 9.0, 3, 1)}
        trace_yields.record(memory, "easy", "debriefed-thread", seen)
    finally:
        memory.close()
    shard = shards.write_shard(shards.memory_snapshot(db), tmp_path / "shard.sqlite")
    ctx = Context(model="fake", db_path=db)
    pinned = {}
    for name, path in (("main", db), ("shard", shard)):
        memory = Memory(path)
        try:
            pinned[name] = pinned_at_start(ctx, memory, "easy")["trace_yields"]
        finally:
            memory.close()
    assert pinned["main"] != trace_yields.prior("easy", None)  # the debrief moved a yield
    assert pinned["shard"] == pinned["main"]


def test_a_killed_worker_is_replaced_and_its_episode_replayed_once(
    sequential, memory_db, tmp_path, monkeypatch
):
    seq_db, seq = sequential
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ENV_VAR, f"{marker}:step_env:3")
    db = copy_db(memory_db, tmp_path / "killed.sqlite")
    res = evaluate(task="easy", seeds=SEEDS, model="fake", db=db, concurrency=2)
    assert marker.exists()  # a worker really was SIGKILLed in the middle of an episode
    import tempfile
    from pathlib import Path

    left = list(Path(tempfile.gettempdir()).glob(f"fakegang-shard-{res['run_id']}-*"))
    assert left == []  # the killed worker's shard directory was removed by the driver
    assert res["errors"] == 0
    assert comparable(res["results"]) == comparable(seq["results"])
    assert recorded(db, res["run_id"]) == recorded(seq_db, seq["run_id"])
    assert duplicates(db) == 0


def test_a_bad_shard_is_refused(tmp_path, memory_db):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(shards.ShardError, match="not a fakegang shard"):
        shards.merge_shard(memory_db, bad)


def test_eval_episodes_never_count_towards_alpha(sequential):
    from fakegang.tools.memory.store import Memory

    db, _ = sequential
    memory = Memory(db)
    try:
        trained = memory.db.execute(
            "select count(*) from episodes where run_id not like 'eval-%'"
        ).fetchone()[0]
        assert trained == 3
        # 3 training episodes, whatever the 6 evaluated ones did
        wins = memory.db.execute(
            "select sum(won) from episodes where run_id not like 'eval-%'"
        ).fetchone()[0]
        assert memory.recent_win_rate("easy") == wins / 3
    finally:
        memory.close()


def test_ray_backend_without_the_extra_exits_2_naming_it(memory_db, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    base = ["eval", "--task", "easy", "--seeds", "0", "--model", "fake", "--db", memory_db]
    assert main([*base, "--backend", "ray"]) == 2
    assert 'pip install "fakegang[ray]"' in capsys.readouterr().err


def test_address_needs_the_ray_backend(memory_db, capsys):
    base = ["eval", "--task", "easy", "--seeds", "0", "--model", "fake", "--db", memory_db]
    assert main([*base, "--address", "auto"]) == 2
    assert "--address joins a Ray cluster" in capsys.readouterr().err
    with pytest.raises(EvalError, match="unknown backend"):
        evaluate(task="easy", seeds=[0], model="fake", db=memory_db, backend="spark")


def test_progress_shows_done_total_wins_and_eta():
    import io

    from fakegang.runs.progress import Progress

    stream = io.StringIO()
    bar = Progress(4, "eval hard", stream=stream)
    for row in ({"won": True}, {"won": False}, {"error": "x"}, {"won": True}):
        bar.update(row)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("eval hard [#####") and "1/4 wins 1" in lines[0]
    assert "ETA" in lines[0]  # a pace to extrapolate from, work left
    assert "4/4 wins 2 errors 1" in lines[-1] and "ETA" not in lines[-1]
