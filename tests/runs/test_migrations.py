"""The store's schema migrations: a database written by the code before them (the committed
fixture) opens, migrates and resumes its interrupted run; one from a newer fakegang is refused in
one line; old values are mapped once, in the file or (read-only) in a copy in memory.

tests/fixtures/memory-v1.sqlite was written by commit ce8c11d (`fakegang train --task easy
--episodes 2 --model fake --db memory-v1.sqlite --log-dir runs`, Ctrl-C in episode 2's 15th
`step_env`, then `fakegang prune --keep-last 0` to keep it small): episode 1 finished, episode 2
interrupted, user_version 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from runs_helpers import only_run_id

from fakegang.cli.main import main
from fakegang.tools.memory.database_check import check_database
from fakegang.tools.memory.episode_row import EPISODE_SCHEMA
from fakegang.tools.memory.migrations import MIGRATIONS, SCHEMA_VERSION, SchemaTooNew
from fakegang.tools.memory.read_only import connect_read_only
from fakegang.tools.memory.schema import TABLE_ROLES, create_version_1, current_columns
from fakegang.tools.memory.store import Memory

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "memory-v1.sqlite"


def _copy(tmp_path: Path) -> Path:
    db = tmp_path / FIXTURE.name
    shutil.copyfile(FIXTURE, db)
    return db


def _columns(db: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(db)
    try:
        names = [r[0] for r in conn.execute("select name from sqlite_master where type='table'")]
        return {n: [r[1] for r in conn.execute(f'PRAGMA table_info("{n}")')] for n in names}
    finally:
        conn.close()


def _version(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_the_fixture_is_a_version_1_file() -> None:
    assert FIXTURE.stat().st_size < 1_000_000
    report = check_database(FIXTURE)
    assert report.schema_version == 1 and SCHEMA_VERSION > 1
    assert report.tables["episodes"] == 2 and report.tables["checkpoints"] > 0


def test_the_v1_fixture_migrates_and_its_interrupted_run_resumes(tmp_path) -> None:
    db = _copy(tmp_path)
    run_id = only_run_id(db)
    first_before = (
        sqlite3.connect(db)
        .execute("select reward, steps_used, action_log from episodes where episode = 1")
        .fetchone()
    )
    proc = subprocess.run(
        [sys.executable, "-m", "fakegang.cli.main", "resume", run_id, "--db", str(db)],
        cwd=tmp_path,  # the run's log folder ("runs") is relative, as it was recorded
        env={**os.environ, "AWS_EC2_METADATA_DISABLED": "true"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _version(db) == SCHEMA_VERSION
    conn = sqlite3.connect(db)
    try:
        status, settings = conn.execute(
            "select status, settings from runs where run_id = ?", [run_id]
        ).fetchone()
        assert status == "finished" and json.loads(settings)["kind"] == "train"
        episodes = conn.execute(
            "select episode, status, learns, thread_id from episodes where run_id = ? "
            "order by episode",
            [run_id],
        ).fetchall()
        assert [(e, s, learns) for e, s, learns, _ in episodes] == [
            (1, "finished", 1),
            (2, "finished", 1),
        ]
        assert (
            conn.execute(
                "select reward, steps_used, action_log from episodes where episode = 1"
            ).fetchone()
            == first_before
        )  # the finished episode is left as it was
        for *_, tid in episodes:
            idx = [r[0] for r in conn.execute("select idx from steps where thread_id = ?", [tid])]
            assert sorted(idx) == list(range(len(idx)))
            observed = conn.execute(
                "select action_count from observations where thread_id = ?", [tid]
            ).fetchone()[0]
            assert observed == len(idx)  # one applied action per recorded step
    finally:
        conn.close()
    metrics = (tmp_path / "runs" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(m)["episode"] for m in metrics] == [1, 2]


def test_readers_see_an_older_file_migrated_and_leave_it_as_it_was(tmp_path, capsys) -> None:
    """`runs`, `report` and the viewer only read: the v1 file is read through a migrated copy."""
    from fakegang.view import db as view_db

    folder = tmp_path / "db"
    folder.mkdir()
    db = _copy(folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with view_db.read_only(db) as conn:
        [run] = view_db.list_runs(conn)
        assert run["kind"] == "train" and run["n_finished"] == 1
    assert main(["runs", "--db", str(db)]) == 0
    assert "interrupted" in capsys.readouterr().out
    assert main(["report", "latest", "--db", str(db), "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "index.html").is_file()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_migrated_file_has_the_schema_of_a_fresh_one(tmp_path) -> None:
    db = _copy(tmp_path)
    Memory(db).close()
    fresh = tmp_path / "fresh.sqlite"
    Memory(fresh).close()
    migrated, new = _columns(db), _columns(fresh)
    for table, columns in new.items():
        assert sorted(migrated[table]) == sorted(columns), table
        assert tuple(columns) == current_columns()[table]


def test_a_database_from_a_newer_fakegang_is_refused_in_one_line(tmp_path, capsys) -> None:
    db = _copy(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    with pytest.raises(SchemaTooNew) as exc:
        Memory(db)
    assert len(str(exc.value).splitlines()) == 1 and "newer fakegang" in str(exc.value)
    assert main(["resume", only_run_id(db), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "newer fakegang" in err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest  # nothing written


def _old_file(path: Path) -> Path:
    """A file stamped 1 by the code before migrations, with the old value shapes."""
    import sqlite_utils

    conn = sqlite3.connect(path)
    create_version_1(sqlite_utils.Database(conn))
    flat = {"model": "fake", "db": "y.sqlite", "temperature": 0.3, "episodes": 5}
    conn.executemany(
        "insert into runs (run_id, status, settings) values (?, 'finished', ?)",
        [
            ("r-old", json.dumps(flat)),
            ("eval-1", json.dumps({"kind": "eval", "model": "fake"})),
        ],
    )
    conn.executemany(
        "insert into episodes (thread_id, run_id, task, status, won, learns, reflection_call, "
        "reflection_error) values (?, ?, 'easy', 'finished', 1, null, ?, ?)",
        [("t1", "r-old", "error", "RuntimeError: boom"), ("t2", "eval-1", None, None)],
    )
    conn.execute(
        "insert into steps (thread_id, idx, action, llm_status, llm_error) "
        "values ('t1', 0, 'submit', 'error', 'timeout after 30.0s x3')"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    return path


def _mapped(conn: sqlite3.Connection) -> dict:
    return {
        "settings": {
            r: json.loads(s) for r, s in conn.execute("select run_id, settings from runs")
        },
        "learns": dict(conn.execute("select thread_id, learns from episodes")),
        "step_class": conn.execute("select llm_error_class from steps").fetchone()[0],
        "reflection_class": conn.execute(
            "select reflection_error_class from episodes where thread_id = 't1'"
        ).fetchone()[0],
    }


EXPECTED = {
    "settings": {
        "r-old": {
            "kind": "train",
            "episodes": 5,
            "context": {"model": "fake", "db_path": "y.sqlite", "temperature": 0.3},
        },
        "eval-1": {"kind": "eval", "model": "fake"},
    },
    "learns": {"t1": 1, "t2": 0},
    "step_class": "timeout",
    "reflection_class": "RuntimeError",
}


def test_old_values_are_mapped_once_by_the_migrations(tmp_path) -> None:
    db = _old_file(tmp_path / "old.sqlite")
    memory = Memory(db)
    try:
        assert _mapped(memory.db.conn) == EXPECTED
        assert memory.summary().splitlines()[1].startswith("  easy  : episodes=1 (+1 read-only)")
    finally:
        memory.close()


def test_a_read_only_open_maps_an_older_file_in_memory_and_leaves_it_alone(tmp_path) -> None:
    db = _old_file(tmp_path / "old.sqlite")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    conn = connect_read_only(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert _mapped(conn) == EXPECTED
    finally:
        conn.close()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert _version(db) == 1


def test_every_table_has_a_role_and_every_migration_a_summary() -> None:
    assert set(current_columns()) == set(TABLE_ROLES)
    assert set(EPISODE_SCHEMA) <= set(current_columns()["episodes"])  # new columns: a migration
    assert all(m.summary for m in MIGRATIONS) and len(MIGRATIONS) == SCHEMA_VERSION
