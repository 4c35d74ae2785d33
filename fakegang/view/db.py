"""Read-only access to the run database for the viewer: one short-lived connection per request.

The file is opened read-only at the current schema (tools/memory/read_only.py: SQLite's `mode=ro`
URI, `immutable=1` without a `-wal` beside it), so no statement can write it, even by mistake;
a training that is writing the same file at the same time is not disturbed (WAL readers never
block the writer) and every request sees its latest commits. A file no command has written
since its schema changed is read through a migrated in-memory copy.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fakegang.tools.memory.read_only import connect_read_only


class ViewError(LookupError):
    """What the viewer cannot show (missing database, unknown run or episode): one line."""


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to `path`, closed on exit."""
    if not path.is_file():
        raise ViewError(f"no database at {path}")
    conn = connect_read_only(path)
    conn.row_factory = sqlite3.Row
    try:
        yield conn
    finally:
        conn.close()


def check_database(path: Path) -> None:
    """Refuse, in one line, a file that holds no fakegang runs (before the server starts)."""
    try:
        with read_only(path) as conn:
            if "runs" not in table_names(conn) or "episodes" not in table_names(conn):
                raise ViewError(f"{path} holds no fakegang runs (no runs/episodes tables)")
    except sqlite3.DatabaseError as exc:
        raise ViewError(f"{path} is not a fakegang run database: {exc}") from None


def rows(conn: sqlite3.Connection, sql: str, args: tuple | list = ()) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sql, args)]


def settings_of(run: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(run.get("settings") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------------------------------- runs
def list_runs(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every run, newest first, with its episode counts and wins."""
    out = rows(
        conn,
        "select r.*, count(e.thread_id) as n_episodes, "
        "sum(case when e.status = 'finished' then 1 else 0 end) as n_finished, "
        "sum(coalesce(e.won, 0)) as n_won, avg(e.grader_score) as mean_grader, "
        "sum(coalesce(e.llm_calls, 0)) as n_llm_calls "
        "from runs r left join episodes e on e.run_id = r.run_id "
        "group by r.run_id order by r.started_at desc, r.rowid desc",
    )
    for r in out:
        s = settings_of(r)
        r["kind"] = s.get("kind")
        r["tasks"] = s.get("task") or s.get("tasks") or ""
    return out


def run(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    found = rows(conn, "select * from runs where run_id = ?", [run_id])
    if not found:
        raise ViewError(f"unknown run {run_id!r}")
    return found[0]


def episodes(
    conn: sqlite3.Connection, run_id: str, *, task: str | None = None, outcome: str | None = None
) -> list[dict[str, Any]]:
    """The run's episodes in order, with the count of steps each recorded."""
    where, args = ["e.run_id = ?"], [run_id]
    if task:
        where.append("e.task = ?")
        args.append(task)
    if outcome == "won":
        where.append("e.status = 'finished' and e.won = 1")
    elif outcome == "lost":
        where.append("e.status = 'finished' and coalesce(e.won, 0) = 0")
    elif outcome == "running":
        where.append("e.status != 'finished'")
    return rows(
        conn,
        "select e.*, (select count(*) from steps s where s.thread_id = e.thread_id) as n_steps "
        f"from episodes e where {' and '.join(where)} order by e.episode, e.started_at",
        args,
    )


def episode(conn: sqlite3.Connection, thread_id: str) -> dict[str, Any]:
    found = rows(conn, "select * from episodes where thread_id = ?", [thread_id])
    if not found:
        raise ViewError(f"unknown episode {thread_id!r}")
    return found[0]


def steps(conn: sqlite3.Connection, thread_id: str) -> list[dict[str, Any]]:
    return rows(conn, "select * from steps where thread_id = ? order by idx", [thread_id])


def neighbours(conn: sqlite3.Connection, ep: dict[str, Any]) -> tuple[str | None, str | None]:
    """Thread ids of the previous and next episode of the same run."""
    q = "select thread_id from episodes where run_id = ? and episode {op} ? order by episode {d}"
    prev = conn.execute(q.format(op="<", d="desc"), [ep["run_id"], ep["episode"]]).fetchone()
    nxt = conn.execute(q.format(op=">", d="asc"), [ep["run_id"], ep["episode"]]).fetchone()
    return (prev[0] if prev else None), (nxt[0] if nxt else None)
