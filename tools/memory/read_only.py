"""Open the run database for commands that only read it (`runs`, `report`, the viewer), writing
nothing, and always at the current schema.

The file is opened with SQLite's `mode=ro` URI (`database_check.open_read_only`): no migration is
applied, the journal mode is not switched to WAL and no `-wal`/`-shm` siblings appear. A file
that has had every migration is read as it is. An older one (no command has written it since
this fakegang came) is copied into memory with SQLite's backup API and migrated there, so readers
see one schema; a table the file never held (LangGraph's, in a memory without checkpoints) gets
an empty TEMP stand-in, so the same queries work and the file stays as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils

from fakegang.tools.memory.database_check import open_read_only
from fakegang.tools.memory.migrations import SCHEMA_VERSION, migrate
from fakegang.tools.memory.schema import current_tables_sql

__all__ = ["connect_read_only", "read_only_checkpointer"]


def _migrated_copy(conn: sqlite3.Connection) -> sqlite3.Connection:
    """An in-memory copy of `conn`'s database with every migration applied."""
    copy = sqlite3.connect(":memory:", check_same_thread=False)
    conn.backup(copy)
    migrate(sqlite_utils.Database(copy))
    return copy


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to `path` (shareable between threads) at the current schema: the
    file itself, or a migrated in-memory copy of an older one."""
    conn = open_read_only(path, check_same_thread=False)
    if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        try:
            copy = _migrated_copy(conn)
        finally:
            conn.close()
        conn = copy
    present = {
        name for (name,) in conn.execute("select name from sqlite_master where type = 'table'")
    }
    for name, sql in current_tables_sql().items():
        if name not in present:
            head, sep, rest = sql.partition("TABLE")
            conn.execute(f"{head}TEMP TABLE{rest}" if sep else sql)
    return conn


def read_only_checkpointer(path: str | Path):
    """LangGraph's SqliteSaver on a read-only connection, its `setup()` (which would create
    tables and switch to WAL) skipped: enough for `get_state` and `get_state_history`."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(connect_read_only(path))
    saver.is_setup = True
    return saver
