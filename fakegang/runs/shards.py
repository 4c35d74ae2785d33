"""SQLite shards: how episodes played elsewhere (a worker process, a Ray node) reach the main DB.

Workers on a cluster share no filesystem, so each unit of work gets its own small SQLite file
(a shard) that starts as a copy of the agent's memory (`memory_snapshot`), records the episode
there exactly as a local run records it (the `episodes`/`steps`/`observations` tables and
LangGraph's `checkpoints`/`writes`), and travels back to the driver as bytes (`shard_bytes`).
The driver merges it (`merge_shard`): per thread id, in one transaction, the main DB's rows of
that thread are deleted and the shard's copied in. A retried episode has the same thread id, so
merging twice (or merging a retry after a partial attempt) never duplicates a row, and
`fakegang runs`, `replay`, `report` and Studio see the episode as if it had run locally.
A campaign's shard (fakegang/runs/campaign_worker.py) is the campaign's whole memory: its rounds
are merged the same way, with its `runs` row; its learned tables stay in the shard.

Hand-rolled on `ATTACH` + `INSERT ... SELECT` because neither LangGraph's SqliteSaver nor
sqlite-utils copies rows between databases. Which tables travel, and their columns, come from the
schema module (tools/memory/schema.py: each table's role, the columns after every migration);
both files are migrated first, so they share one schema.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from fakegang.tools.memory.schema import EPISODE, KNOWLEDGE, current_columns, tables_of

#: What the agent learned: copied into every shard, read-only during `eval`.
MEMORY_TABLES = tables_of(KNOWLEDGE)
#: Tables keyed by an episode's thread id (what an episode adds to the database).
THREAD_TABLES = tables_of(EPISODE)


class ShardError(ValueError):
    """A shard that cannot be merged (not SQLite, or not written by a worker)."""


@dataclass(frozen=True)
class MergeStats:
    threads: tuple[str, ...]
    rows: int


def _prepare(db: str | Path) -> None:
    """Create the memory tables and LangGraph's checkpoint tables in `db` if missing."""
    from fakegang.graph.graph import sqlite_checkpointer
    from fakegang.tools.memory.store import Memory

    Memory(db).close()
    saver = sqlite_checkpointer(db)
    try:
        saver.setup()
    finally:
        saver.conn.close()


def memory_snapshot(db: str | Path) -> bytes:
    """A fresh shard holding a copy of `db`'s memory tables (not its episodes or checkpoints)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fakegang-snap-") as tmp:
        path = Path(tmp) / "snapshot.sqlite"
        _prepare(path)
        if Path(db).exists():
            _prepare(db)  # migrated first: both files have the columns the copy names
            conn = sqlite3.connect(path)
            try:
                conn.execute("ATTACH DATABASE ? AS src", (str(db),))
                with conn:
                    for table in MEMORY_TABLES:
                        cols = _column_list(table)
                        conn.execute(
                            f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM src.{table}"
                        )
                conn.execute("DETACH DATABASE src")
            finally:
                conn.close()
        return shard_bytes(path)


def write_shard(data: bytes, path: str | Path) -> Path:
    """Materialise shard bytes as a database file (a worker's start, the driver's merge)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def shard_bytes(path: str | Path) -> bytes:
    """The whole shard as one self-contained file image (its WAL folded in first)."""
    conn = sqlite3.connect(str(path))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")  # no -wal file expected next to the copy
    finally:
        conn.close()
    return Path(path).read_bytes()


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA {schema}.table_info({table})")]


def _column_list(table: str) -> str:
    """`table`'s columns after every migration, quoted for SQL."""
    return ", ".join(f'"{c}"' for c in current_columns()[table])


def shard_threads(path: str | Path) -> list[str]:
    """Thread ids of the episodes a shard finished (the ones worth merging)."""
    conn = sqlite3.connect(str(path))
    try:
        rows = conn.execute(
            "select thread_id from episodes where status = 'finished' order by rowid"
        ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise ShardError(f"{path} is not a fakegang shard: {exc}") from exc
    finally:
        conn.close()
    return [r[0] for r in rows]


def merge_shard(
    main_db: str | Path,
    shard: str | Path,
    thread_ids: list[str] | None = None,
    run_ids: list[str] | tuple[str, ...] = (),
) -> MergeStats:
    """Copy the shard's rows of `thread_ids` (default: its finished episodes) into `main_db`,
    replacing any earlier copy of the same threads, in one transaction; the `runs` rows of
    `run_ids` too (a campaign's shard holds its own run row)."""
    threads = shard_threads(shard) if thread_ids is None else list(thread_ids)
    if not threads:
        return MergeStats((), 0)
    _prepare(main_db)
    conn = sqlite3.connect(str(main_db), timeout=30)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("ATTACH DATABASE ? AS shard", (str(shard),))
        copied = 0
        with conn:  # all threads or none: a crash mid-merge leaves the main DB as it was
            keyed = [(t, "thread_id", threads) for t in THREAD_TABLES]
            if run_ids:
                keyed.append(("runs", "run_id", list(run_ids)))
            for table, key, values in keyed:
                if not _columns(conn, "shard", table):
                    continue  # e.g. a shard whose episode never wrote a step
                marks = ", ".join("?" for _ in values)
                cols = _column_list(table)
                conn.execute(f"DELETE FROM main.{table} WHERE {key} IN ({marks})", values)
                cur = conn.execute(
                    f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM shard.{table} "
                    f"WHERE {key} IN ({marks})",
                    values,
                )
                copied += cur.rowcount
        conn.execute("DETACH DATABASE shard")
    finally:
        conn.close()
    return MergeStats(tuple(threads), copied)


def merge_shard_bytes(
    main_db: str | Path, data: bytes, workdir: str | Path, name: str = "shard"
) -> MergeStats:
    """`merge_shard` for a shard that arrived as bytes (written under `workdir`, then removed)."""
    path = write_shard(data, Path(workdir) / f"{name}.sqlite")
    try:
        return merge_shard(main_db, path)
    finally:
        path.unlink(missing_ok=True)
