"""The memory's connection layer: one SQLite connection, its lock and its write transactions.

Every repository of the memory (tools/memory/records.py, lessons.py, alphas.py, the run records
of fakegang/runs/records.py and the learning stores of tools/learning) reads and writes through one
`MemoryConnection`. Opening it for writing applies the schema migrations the file lacks
(tools/memory/migrations.py); opening it `file_read_only` reads the file as it is, or a migrated
in-memory copy of an older one (tools/memory/read_only.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from fakegang.tools.memory.migrations import migrate

__all__ = ["LockedDatabase", "MemoryConnection"]


class LockedDatabase(sqlite_utils.Database):
    """sqlite-utils wraps each `query` in a named SAVEPOINT; threads sharing the connection
    (`eval --concurrency`) interleave them ("no such savepoint"). Queries run under the memory's
    lock and are read to the end before it is released."""

    lock: threading.RLock

    def query(self, sql: str, params: Any = None) -> Any:
        with self.lock:
            return iter(list(super().query(sql, params)))

    @contextmanager
    def atomic(self) -> Iterator[sqlite_utils.Database]:
        """sqlite-utils' write transaction, begun with `BEGIN IMMEDIATE` instead of `BEGIN`.

        Every sqlite-utils write (create, upsert, insert) reads the schema inside its transaction
        before it writes. After a deferred `BEGIN` that read pins a WAL snapshot; if another
        connection (the checkpointer's, another training's) commits before the write, SQLite
        refuses to upgrade the stale snapshot at once with "database is locked", without waiting
        the busy timeout (SQLITE_BUSY_SNAPSHOT). Taking the write lock first waits in the busy
        handler instead. Nested blocks keep sqlite-utils' savepoints."""
        with self.lock:
            if self.conn.in_transaction:
                with super().atomic():
                    yield self
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self
                self.conn.execute("COMMIT")
            except BaseException:  # the block or the COMMIT failed
                self.rollback()
                raise


class MemoryConnection:
    """One connection to the memory database, safe to share between threads of one process."""

    def __init__(
        self, path: str | Path, *, read_only: bool = False, file_read_only: bool = False
    ) -> None:
        """`read_only`: writes are skipped (evaluations, forks). `file_read_only`: also open the
        file read-only (tools/memory/read_only.py), for commands that only read it: no folder,
        migration, WAL switch or sibling file is created."""
        self.path = Path(path)
        self.read_only = read_only or file_read_only
        if file_read_only:
            from fakegang.tools.memory.read_only import connect_read_only

            conn = connect_read_only(self.path)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # durable across a kill, no fsync
        self._lock = threading.RLock()
        self.db = LockedDatabase(conn)
        self.db.lock = self._lock
        if not file_read_only:
            try:
                migrate(self.db)
            except BaseException:
                conn.close()
                raise

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold this memory's lock: the queries inside read one consistent view, with no other
        thread of this process (e.g. `eval --concurrency`) interleaving on the shared
        connection. Writes that read first want `write_transaction` instead."""
        with self._lock:
            yield

    @contextmanager
    def write_transaction(self) -> Iterator[None]:
        """A read-modify-write that no other thread or process can interleave: this memory's
        lock, then `BEGIN IMMEDIATE` (the write lock taken up front, waiting up to the busy
        timeout), committed at the end or rolled back on error. Without it Python's sqlite3
        opens a transaction only at the first write, so what was read before it may be stale,
        and two trainings on one file could both apply the same read (or fail to upgrade).
        The same transaction every sqlite-utils write of this memory opens (`LockedDatabase`)."""
        with self.db.atomic():
            yield

    def upsert(self, table: str, row: dict[str, Any], pk: str | tuple[str, ...]) -> None:
        """Insert or update one row (skipped on a read-only memory): every repository's write."""
        if self.read_only:
            return
        with self._lock:
            self.db[table].upsert(row, pk=pk)

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[dict]:
        """Every row of a query as a dict, read under the lock."""
        return list(self.db.query(sql, list(args)))

    def keys_beyond(
        self,
        table: str,
        *,
        key: str,
        where: str = "1",
        args: Sequence[Any] = (),
        order: str,
        keep: int,
    ) -> list[Any]:
        """`key` of the rows of `table` matching `where` past the first `keep` in `order`.

        The one way every bounded table (reflections, credit, insights, insight votes, weight
        versions) finds what it holds beyond its bound. `table`, `key`, `where` and `order` are
        SQL from the calling module, never from input; values go in `args`.
        """
        sql = f"select {key} from {table} where {where} order by {order} limit -1 offset ?"
        return [r[key] for r in self.db.query(sql, [*args, keep])]

    def task_threads(self, table: str, task: str) -> list[str]:
        """Thread ids of `table`'s rows for `task`, oldest first (by first insertion): the episodes
        a per-episode learning table (experience, trace yields) holds. `table` is SQL from the
        calling module, never from input."""
        sql = (
            f"select thread_id, min(rowid) first from {table} where task = ? "
            "group by thread_id order by first"
        )
        return [r["thread_id"] for r in self.db.query(sql, [task])]

    def trim(
        self,
        table: str,
        *,
        key: str,
        where: str = "1",
        args: Sequence[Any] = (),
        order: str,
        keep: int,
    ) -> int:
        """Delete the rows of `table` matching `where` beyond the first `keep` in `order` (newest
        first: the newest `keep` stay). Joins the caller's transaction if one is open. Returns
        how many rows went (none from a read-only memory)."""
        if self.read_only:
            return 0
        with self._lock:
            stale = self.keys_beyond(table, key=key, where=where, args=args, order=order, keep=keep)
            for chunk in range(0, len(stale), 500):  # SQLite's bound-parameter limit
                part = stale[chunk : chunk + 500]
                marks = ",".join("?" * len(part))
                self.db.execute(f"delete from {table} where {key} in ({marks})", part)
        return len(stale)

    def close(self) -> None:
        self.db.conn.close()
