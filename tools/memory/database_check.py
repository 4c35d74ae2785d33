"""Check a fakegang SQLite file before anything opens it for real, and back it up online.

Every command that takes `--db` runs `preflight(path)` first (from `fakegang/cli/main.py`), so a
truncated copy, a file that is not SQLite at all, another program's database or one written by a
newer fakegang ends in one clear line and exit code 2 instead of a traceback in the middle of a
run. The checks only read: the file is opened with SQLite's `mode=ro` (plus `immutable=1` when
no `-wal` file sits beside it, so not even `-wal`/`-shm` siblings are created), and nothing is
written to a file that fails a check.

The schema version is SQLite's own `PRAGMA user_version`: the count of migrations the file has
had (tools/memory/migrations.py, which also sets `PRAGMA application_id` to mark the file as
fakegang's). An older file passes (opening it migrates it); one from a newer fakegang is refused
with the line `migrations.too_new` gives. The tables and key columns checked come from the
schema module (tools/memory/schema.py), LangGraph's checkpoint tables included.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from fakegang.tools.memory.migrations import APPLICATION_ID, SCHEMA_VERSION, too_new
from fakegang.tools.memory.schema import key_columns

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "DatabaseProblem",
    "DatabaseReport",
    "backup_database",
    "check_database",
    "open_read_only",
    "preflight",
]

SQLITE_HEADER = b"SQLite format 3\x00"
_ADVICE_DAMAGED = (
    "restore it from a backup (`fakegang db backup` makes one), or move it aside and pass --db "
    "with a new path"
)
_ADVICE_FOREIGN = "pass --db with the path of a fakegang database, or a new path to start one"
_ADVICE_EMPTY = (
    "pass --db with the database of a run (`fakegang train --db PATH` makes one), or remove the "
    "empty file"
)


class DatabaseProblem(Exception):
    """The file cannot be used; `str()` is the one line the CLI prints."""

    def __init__(self, path: str | Path, what: str, advice: str):
        self.path = Path(path)
        self.what = " ".join(what.split())  # SQLite's b-tree reports span lines: keep one
        self.advice = advice
        super().__init__(f"{self.path}: {self.what}; {advice}")


@dataclass
class DatabaseReport:
    """What `check_database` found in a usable file (printed by `fakegang db check`)."""

    path: Path
    size_bytes: int
    integrity: str
    schema_version: int
    stamped: bool
    journal_mode: str
    tables: dict[str, int] = field(default_factory=dict)  # our tables present -> row count

    def lines(self) -> list[str]:
        unstamped = "" if self.stamped else " (unstamped, from before version 1)"
        version = f"{self.schema_version}{unstamped}"
        counts = ", ".join(f"{name} {n}" for name, n in self.tables.items()) or "none yet"
        return [
            f"database      : {self.path} ({self.size_bytes:,} bytes, journal {self.journal_mode})",
            f"integrity     : {self.integrity}",
            f"schema version: {version} (this fakegang reads up to {SCHEMA_VERSION}; an older "
            "file is migrated when a command writes it)",
            f"rows          : {counts}",
        ]


def open_read_only(path: str | Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection that cannot write to `path` or create files beside it (see module doc).

    Commands that only read (`runs`, `replay`, `report`, the checks here) open the database this
    way: no schema is created, the journal mode is not switched, and with no `-wal` beside the
    file (no writer has it open) `immutable=1` keeps SQLite from creating `-wal`/`-shm` siblings,
    which on a read-only file would be made read-only too and break the next run.
    """
    path = Path(path)
    wal = path.with_name(path.name + "-wal")
    query = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    return sqlite3.connect(
        f"file:{path.resolve()}?{query}",
        uri=True,
        timeout=30,
        check_same_thread=check_same_thread,
    )


_open_read_only = open_read_only


def _read_header(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise DatabaseProblem(
            path, f"cannot be read ({exc.strerror})", "check its permissions"
        ) from None


def check_database(
    path: str | Path, *, full: bool = False, allow_empty: bool = False
) -> DatabaseReport:
    """Read-only checks of an existing file; raises `DatabaseProblem` naming what is wrong.

    `full` runs `PRAGMA integrity_check` (every index against its table) instead of the
    faster `quick_check` that commands run before they start. An empty (0-byte) file passes
    only with `allow_empty` (a command that creates the database may start one there); for
    `db check` and the commands that only read it holds no fakegang database.
    """
    path = Path(path)
    if path.is_dir():
        raise DatabaseProblem(path, "is a directory, not a database file", _ADVICE_FOREIGN)
    if not path.exists():
        raise DatabaseProblem(path, "does not exist", "check the path given to --db")
    size = path.stat().st_size
    if size == 0:  # SQLite treats an empty file as an empty database
        if allow_empty:
            return DatabaseReport(path, 0, "ok", SCHEMA_VERSION, False, "none")
        raise DatabaseProblem(path, "is empty (0 bytes), not a fakegang database", _ADVICE_EMPTY)
    header = _read_header(path)
    if header != SQLITE_HEADER:
        raise DatabaseProblem(
            path, "is not an SQLite database (wrong file header)", _ADVICE_FOREIGN
        )
    conn = None
    try:
        conn = _open_read_only(path)
        pragma = "integrity_check" if full else "quick_check"
        problems = [row[0] for row in conn.execute(f"PRAGMA {pragma}(5)")]
        if problems != ["ok"]:
            raise DatabaseProblem(
                path, f"is damaged ({pragma} found: {'; '.join(problems)[:200]})", _ADVICE_DAMAGED
            )
        report = _inspect_schema(conn, path, size)
        report.integrity = "ok" + (" (full integrity_check)" if full else " (quick_check)")
        return report
    except sqlite3.DatabaseError as exc:
        raise DatabaseProblem(path, f"is damaged ({exc})", _ADVICE_DAMAGED) from None
    finally:
        if conn is not None:
            conn.close()


def _inspect_schema(conn: sqlite3.Connection, path: Path, size: int) -> DatabaseReport:
    tables = {row[0] for row in conn.execute("select name from sqlite_master where type='table'")}
    tables = {t for t in tables if not t.startswith("sqlite_")}
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    # (an immutable connection reports "delete": read the file's own header bytes 18-19)
    with path.open("rb") as fh:
        header = fh.read(20)
    journal = "wal" if len(header) == 20 and header[18] == 2 else "rollback"
    expected = key_columns()
    ours = tables & expected.keys()
    if app_id not in (0, APPLICATION_ID):
        raise DatabaseProblem(
            path,
            f"belongs to another program (SQLite application_id {app_id:#x}, not fakegang's)",
            _ADVICE_FOREIGN,
        )
    if tables and not ours:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise DatabaseProblem(
            path, f"is not a fakegang database (its tables: {shown})", _ADVICE_FOREIGN
        )
    newer = too_new(version)
    if newer:
        raise DatabaseProblem(path, newer, "upgrade fakegang, or pass --db with another file")
    for table in sorted(ours):
        columns = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
        missing = expected[table] - columns
        if missing:
            raise DatabaseProblem(
                path,
                f"has an unexpected schema (table {table} lacks {', '.join(sorted(missing))})",
                _ADVICE_FOREIGN,
            )
    counts = {t: conn.execute(f'select count(*) from "{t}"').fetchone()[0] for t in sorted(ours)}
    stamped = version != 0
    return DatabaseReport(path, size, "ok", version, stamped, journal, counts)


def preflight(path: str | Path | None, *, writes: bool = True) -> str | None:
    """The one-line error for a command about to open `path`, or None when it may go on.

    A path that does not exist yet is fine here: commands that create a database create it,
    the others say so themselves. A command that `writes` also needs the file, its `-wal`/`-shm`
    siblings and its folder writable (tools/memory/writable.py); one that only reads needs a
    fakegang database, not an empty file or an SQLite file without our tables.
    """
    if path is None:
        return None
    path = Path(path)
    if path.exists() or path.is_symlink():
        try:
            report = check_database(path, allow_empty=writes)
        except DatabaseProblem as exc:
            return str(exc)
        if not writes and "runs" not in report.tables:
            return str(DatabaseProblem(path, "holds no fakegang runs yet", _ADVICE_EMPTY))
    if writes:
        from fakegang.tools.memory.writable import write_problem

        return write_problem(path)
    return None


def backup_database(source: str | Path, dest: str | Path) -> DatabaseReport:
    """Copy `source` to `dest` with SQLite's online backup API (consistent while a run writes).

    The whole copy is one backup step: it reads one snapshot under a read lock, which in WAL
    mode (ours) does not block a writer, where a page-by-page backup would restart every time
    the run commits. The copy is checked (`integrity_check`) afterwards and its report
    returned. `dest` must not exist: a backup never overwrites anything.
    """
    source, dest = Path(source), Path(dest)
    check_database(source)
    if dest.exists():
        raise DatabaseProblem(dest, "already exists", "choose a new path for the backup")
    if not dest.parent.is_dir():
        raise DatabaseProblem(dest, "is in a directory that does not exist", "create it first")
    src = sqlite3.connect(str(source), timeout=30)
    tmp = dest.with_name(dest.name + ".partial")
    try:
        out = sqlite3.connect(str(tmp))
        try:
            src.backup(out)
            out.execute("PRAGMA journal_mode=DELETE")  # a single self-contained file
        finally:
            out.close()
        tmp.replace(dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        src.close()
    return check_database(dest, full=True)
