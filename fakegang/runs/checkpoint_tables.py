"""All raw SQL on LangGraph's SQLite checkpoint tables (`checkpoints`, `writes`), in one place.

LangGraph's `SqliteSaver` offers no API for what run management needs: copying a branch of a
thread into a new thread (fork), dropping all but a thread's head checkpoint (prune), listing
thread ids and measuring their size (Studio, bench). Those queries depend on the saver's table
layout (langgraph-checkpoint-sqlite 3.x), so they live here and nowhere else: a layout change
means one module to fix, and tests/runs/test_replay_fork_prune.py exercises every function.
"""

from __future__ import annotations

import sqlite3
import threading

from fakegang.tools.memory import schema

#: LangGraph's tables, as the schema module names them.
CHECKPOINT_TABLES = frozenset(schema.CHECKPOINT_TABLES)


def table_names(conn: sqlite3.Connection) -> set[str]:
    """Every table of the database (to tell a checkpoint file from anything else)."""
    return {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}


def thread_ids(conn: sqlite3.Connection) -> list[str]:
    """Every thread with at least one checkpoint (none when the tables do not exist yet)."""
    if "checkpoints" not in table_names(conn):
        return []
    return [r[0] for r in conn.execute("select distinct thread_id from checkpoints")]


def checkpoint_count(conn: sqlite3.Connection, thread_id: str) -> int:
    return conn.execute(
        "select count(*) from checkpoints where thread_id = ?", (thread_id,)
    ).fetchone()[0]


def thread_bytes(conn: sqlite3.Connection, thread_id: str) -> int:
    """Bytes a thread's checkpoints (blob + metadata) and pending writes take."""
    a = conn.execute(
        "select coalesce(sum(length(checkpoint) + length(metadata)), 0) from checkpoints "
        "where thread_id = ?",
        (thread_id,),
    ).fetchone()[0]
    b = conn.execute(
        "select coalesce(sum(length(value)), 0) from writes where thread_id = ?", (thread_id,)
    ).fetchone()[0]
    return int(a + b)


def copy_branch(
    conn: sqlite3.Connection, lock: threading.Lock, src: str, dst: str, checkpoint_ids: list[str]
) -> None:
    """Copy checkpoints (and the writes of all but the last) of `src` into thread `dst`.

    Run under the saver's own lock and connection, so no checkpoint write interleaves."""
    with lock:
        for cid in checkpoint_ids:
            conn.execute(
                "insert into checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata) select ?, checkpoint_ns, "
                "checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata from "
                "checkpoints where thread_id = ? and checkpoint_ns = '' and checkpoint_id = ?",
                (dst, src, cid),
            )
        for cid in checkpoint_ids[:-1]:
            conn.execute(
                "insert into writes (thread_id, checkpoint_ns, checkpoint_id, task_id, "
                "task_path, idx, channel, type, value) select ?, checkpoint_ns, checkpoint_id, "
                "task_id, task_path, idx, channel, type, value from writes where thread_id = ? "
                "and checkpoint_ns = '' and checkpoint_id = ?",
                (dst, src, cid),
            )
        conn.commit()


def keep_only_head(conn: sqlite3.Connection, thread_id: str, head_id: str) -> tuple[int, int]:
    """Delete every checkpoint and write of a thread but its head, which becomes a root (so
    `get_state` still reads it); returns (checkpoints deleted, writes deleted). The caller
    commits."""
    deleted_cp = conn.execute(
        "delete from checkpoints where thread_id = ? and not "
        "(checkpoint_ns = '' and checkpoint_id = ?)",
        (thread_id, head_id),
    ).rowcount
    deleted_w = conn.execute(
        "delete from writes where thread_id = ? and not (checkpoint_ns = '' and checkpoint_id = ?)",
        (thread_id, head_id),
    ).rowcount
    conn.execute(
        "update checkpoints set parent_checkpoint_id = null where thread_id = ? "
        "and checkpoint_id = ?",
        (thread_id, head_id),
    )
    return deleted_cp, deleted_w


def thread_checkpoints(
    conn: sqlite3.Connection, thread_id: str
) -> list[tuple[str, str | None, str]]:
    """(checkpoint id, parent id, metadata JSON) of a thread's root-namespace checkpoints,
    newest first, without their blobs (the viewer walks the branch, then reads the writes)."""
    return conn.execute(
        "select checkpoint_id, parent_checkpoint_id, metadata from checkpoints "
        "where thread_id = ? and checkpoint_ns = '' order by checkpoint_id desc",
        (thread_id,),
    ).fetchall()


def thread_writes(conn: sqlite3.Connection, thread_id: str) -> list[tuple[str, str, str, bytes]]:
    """(checkpoint id, channel, type, value) of every write of a thread, in task order: what
    each node returned, attached to the checkpoint it ran from."""
    return conn.execute(
        "select checkpoint_id, channel, type, value from writes "
        "where thread_id = ? and checkpoint_ns = '' order by checkpoint_id, task_id, idx",
        (thread_id,),
    ).fetchall()
