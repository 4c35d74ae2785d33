"""Open the run database for commands that only read it (`runs`, `report`), writing nothing.

The file is opened with SQLite's `mode=ro` URI (`database_check.open_read_only`): no schema is
created, the journal mode is not switched to WAL and no `-wal`/`-shm` siblings appear. A file
from an older fakegang may lack a table today's code reads (say `run_owners`); instead of
creating it in the file, an empty copy is made in the connection's TEMP schema (in memory), so
the same queries work and the file stays as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fakegang.tools.memory.database_check import open_read_only

__all__ = ["connect_read_only", "read_only_checkpointer"]


def _reference_tables() -> dict[str, str]:
    """name -> CREATE statement of every table the memory and the checkpointer create."""
    import sqlite_utils
    from langgraph.checkpoint.sqlite import SqliteSaver

    from fakegang.tools.memory.schema import ensure_schema

    ref = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        ensure_schema(sqlite_utils.Database(ref))
        SqliteSaver(ref).setup()
        rows = ref.execute(
            "select name, sql from sqlite_master where type = 'table' and sql is not null "
            "and name not like 'sqlite_%'"
        ).fetchall()
    finally:
        ref.close()
    return dict(rows)


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to `path` (shareable between threads) where every table of the
    current schema exists: the file's own, or an empty TEMP stand-in for one it lacks."""
    conn = open_read_only(path, check_same_thread=False)
    present = {
        name for (name,) in conn.execute("select name from sqlite_master where type = 'table'")
    }
    for name, sql in _reference_tables().items():
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
