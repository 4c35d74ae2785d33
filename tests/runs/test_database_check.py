"""Damaged or foreign databases: every command that opens `--db` exits 2 with one line and
writes nothing; `fakegang db check` and `fakegang db backup`."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

from fakegang.cli.main import main
from fakegang.graph.graph import sqlite_checkpointer
from fakegang.tools.memory.database_check import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    DatabaseProblem,
    backup_database,
    check_database,
)
from fakegang.tools.memory.store import Memory

# every command that opens the database, with its other required arguments
DB_COMMANDS = [
    ["train", "--model", "fake", "--episodes", "1"],
    ["eval", "--task", "easy", "--seeds", "0-0", "--model", "fake"],
    ["runs"],
    ["resume", "r-none"],
    ["replay", "00000000-0000-0000-0000-000000000000"],
    ["fork", "00000000-0000-0000-0000-000000000000", "--at", "0", "--action", "submit"],
    ["prune", "--keep-last", "1"],
    ["studio"],
    ["report", "latest"],
    ["view"],
]


def make_real_db(path: Path, rows: int = 400) -> Path:
    """A database as a training leaves it: memory tables, LangGraph's tables, some rows."""
    memory = Memory(path)
    for i in range(rows):
        memory.upsert_run(
            {"run_id": f"r{i}", "started_at": "x", "status": "finished", "settings": "{}" * 40}
        )
    memory.db.conn.commit()
    saver = sqlite_checkpointer(path)
    saver.setup()
    saver.conn.close()
    memory.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    memory.db.conn.close()
    return path


@pytest.fixture(scope="module")
def real_db(tmp_path_factory) -> Path:
    return make_real_db(tmp_path_factory.mktemp("real") / "good.sqlite")


def truncated(real_db: Path, dest: Path) -> Path:
    data = real_db.read_bytes()
    dest.write_bytes(data[: len(data) // 2])
    return dest


def not_a_database(dest: Path) -> Path:
    dest.write_text("run_id,reward\nr1,3.5\n" * 50)
    return dest


def foreign(dest: Path) -> Path:
    conn = sqlite3.connect(dest)
    conn.execute("create table customers (id integer primary key, name text)")
    conn.execute("insert into customers values (1, 'x')")
    conn.commit()
    conn.close()
    return dest


def newer(real_db: Path, dest: Path) -> Path:
    dest.write_bytes(real_db.read_bytes())
    conn = sqlite3.connect(dest)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    return dest


def snapshot(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}


BAD = {
    "truncated": (lambda real, d: truncated(real, d / "bad.sqlite"), "is damaged"),
    "not_sqlite": (lambda real, d: not_a_database(d / "bad.sqlite"), "is not an SQLite database"),
    "foreign": (lambda real, d: foreign(d / "bad.sqlite"), "is not a fakegang database"),
    "newer": (lambda real, d: newer(real, d / "bad.sqlite"), "newer fakegang"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("command", DB_COMMANDS, ids=lambda c: c[0])
def test_every_db_command_refuses_a_bad_file_in_one_line(
    kind, command, real_db, tmp_path, capsys
) -> None:
    make, phrase = BAD[kind]
    bad = make(real_db, tmp_path)
    before = snapshot(tmp_path)
    rc = main([*command, "--db", str(bad)])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1, err  # one line, no traceback
    assert err.startswith(f"error: {bad}:") and phrase in err
    assert "backup" in err or "--db" in err or "upgrade" in err  # says what to do
    assert snapshot(tmp_path) == before  # nothing written, no -wal/-shm created


def test_a_good_database_passes_and_is_stamped(real_db, capsys) -> None:
    report = check_database(real_db, full=True)
    assert report.schema_version == SCHEMA_VERSION and report.stamped
    assert report.tables["runs"] == 400 and "checkpoints" in report.tables
    assert {"experience", "weight_versions", "credit", "insights"} <= set(report.tables)
    conn = sqlite3.connect(real_db)
    assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
    conn.close()
    assert main(["db", "check", "--db", str(real_db)]) == 0
    out = capsys.readouterr().out
    assert "integrity     : ok (full integrity_check)" in out
    assert f"schema version: {SCHEMA_VERSION}" in out and "runs 400" in out


def test_an_unstamped_file_from_before_v1_is_accepted(real_db, tmp_path) -> None:
    old = tmp_path / "old.sqlite"
    old.write_bytes(real_db.read_bytes())
    conn = sqlite3.connect(old)
    conn.execute("PRAGMA user_version = 0")
    conn.execute("PRAGMA application_id = 0")
    conn.commit()
    conn.close()
    report = check_database(old)
    assert report.schema_version == 0 and not report.stamped
    Memory(old).db.conn.close()  # the next run migrates it
    assert check_database(old).schema_version == SCHEMA_VERSION


def test_missing_columns_are_a_schema_problem(tmp_path) -> None:
    path = tmp_path / "odd.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("create table episodes (thread_id text)")
    conn.commit()
    conn.close()
    with pytest.raises(DatabaseProblem, match="table episodes lacks"):
        check_database(path)


def test_db_check_on_bad_files_and_paths(real_db, tmp_path, capsys) -> None:
    for kind, (make, phrase) in BAD.items():
        bad = make(real_db, tmp_path / kind if (tmp_path / kind).mkdir() is None else tmp_path)
        assert main(["db", "check", "--db", str(bad)]) == 2
        assert phrase in capsys.readouterr().err
    assert main(["db", "check", "--db", str(tmp_path / "absent.sqlite")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["db", "check", "--db", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_a_missing_file_is_left_to_the_command(tmp_path, capsys) -> None:
    """Commands that create a database still do; read-only ones say it is missing."""
    assert main(["runs", "--db", str(tmp_path / "new.sqlite")]) in (0, 2)
    assert "Traceback" not in capsys.readouterr().err


def test_backup_copies_and_checks_and_never_overwrites(real_db, tmp_path, capsys) -> None:
    dest = tmp_path / "copy.sqlite"
    assert main(["db", "backup", str(dest), "--db", str(real_db)]) == 0
    assert "written to" in capsys.readouterr().out
    conn = sqlite3.connect(dest)
    assert conn.execute("select count(*) from runs").fetchone() == (400,)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    conn.close()
    before = dest.read_bytes()
    assert main(["db", "backup", str(dest), "--db", str(real_db)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert dest.read_bytes() == before
    bad = truncated(real_db, tmp_path / "bad.sqlite")
    assert main(["db", "backup", str(tmp_path / "c2.sqlite"), "--db", str(bad)]) == 2
    assert not (tmp_path / "c2.sqlite").exists()
    assert not (tmp_path / "c2.sqlite.partial").exists()


def test_backup_while_a_run_writes_is_consistent(tmp_path) -> None:
    source = make_real_db(tmp_path / "live.sqlite", rows=50)
    memory = Memory(source)
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            memory.upsert_run({"run_id": f"live{i}", "started_at": "x", "status": "running"})
            memory.db.conn.commit()
            written.append(i)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(written) < 20:
            pass
        reports = [backup_database(source, tmp_path / f"b{k}.sqlite") for k in range(3)]
    finally:
        stop.set()
        thread.join()
    counts = [r.tables["runs"] for r in reports]
    assert all(r.integrity.startswith("ok") for r in reports)
    assert counts == sorted(counts) and counts[0] >= 50 + 20  # snapshots, in order
    assert counts[-1] <= 50 + len(written)
