"""Long-term memory of the agent in SQLite tables managed with sqlite-utils.

Everything the agent learns between episodes lives here (runs, episodes, steps, reflections, best
trajectories, α per task), in the same database file as LangGraph's checkpoints. Every write is an
upsert keyed by the episode's thread id (and step index), so a graph node that re-runs after a crash
overwrites its own rows instead of duplicating them.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from fakegang.tools.learning.alpha import ALPHA_FLOOR
from fakegang.tools.memory.schema import ensure_schema, utc_now
from fakegang_env.tasks import TASK_NAMES

#: Reflections kept per task; older ones are deleted (prompts use only the last few).
MAX_REFLECTIONS_PER_TASK = 40
#: Similarity (difflib ratio on normalised text) above which a reflection counts as a duplicate.
DUPLICATE_RATIO = 0.9
#: Episodes of a task that make up the "recent" win rate.
RECENT_WINDOW = 10
#: Run ids of `fakegang eval`: their episodes are recorded but never count towards learning.
EVAL_RUN_PREFIX = "eval-"
#: SQL condition on `episodes`: the episode wrote into the memory training reads. Rows from
#: before the `learns` column count unless they belong to an evaluation.
LEARNED = "coalesce(learns, coalesce(run_id, '') not like 'eval-%') = 1"


def _normalise(text: str) -> str:
    text = re.sub(r"u_[0-9a-f]+", "ID", text.lower())
    text = re.sub(r"[0-9.]+", "N", text)
    return " ".join(re.sub(r"[^a-z N]+", " ", text).split())


@dataclass(frozen=True)
class Reflection:
    id: int
    task: str
    thread_id: str
    text: str
    won: bool
    reward: float


@dataclass(frozen=True)
class Trajectory:
    task: str
    thread_id: str
    reward: float
    grader_score: float
    action_log: list[str]
    final_message: str


class _LockedDatabase(sqlite_utils.Database):
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


class Memory:
    """The agent's memory tables (tools/memory/schema.py); run management reads and writes its
    own tables of the same file through fakegang/runs/records.py. Safe to share between threads
    of one process."""

    def __init__(
        self, path: str | Path, *, read_only: bool = False, file_read_only: bool = False
    ) -> None:
        """`read_only`: writes are skipped (evaluations, forks). `file_read_only`: also open the
        file read-only (tools/memory/read_only.py), for commands that only read it: no folder,
        schema, WAL switch or sibling file is created."""
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
        self.db = _LockedDatabase(conn)
        self.db.lock = self._lock
        if not file_read_only:
            self._ensure_schema()

    def _ensure_schema(self) -> None:
        with self._lock:
            ensure_schema(self.db)

    # ------------------------------------------------------------------ writes
    def _write(self, table: str, row: dict[str, Any], pk: str | tuple[str, ...]) -> None:
        if self.read_only:
            return
        with self._lock:
            self.db[table].upsert(row, pk=pk)

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
        The same transaction every sqlite-utils write of this memory opens (`_LockedDatabase`)."""
        with self.db.atomic():
            yield

    # ------------------------------------------------------------------ bounds
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

    def upsert_run(self, row: dict[str, Any]) -> None:
        self._write("runs", {**row, "updated_at": utc_now()}, "run_id")

    def upsert_episode(self, row: dict[str, Any]) -> None:
        self._write("episodes", row, "thread_id")

    def upsert_step(self, row: dict[str, Any]) -> None:
        self._write("steps", row, ("thread_id", "idx"))

    def save_observation(self, thread_id: str, action_count: int, observation: dict) -> None:
        """Keep the latest observation of an episode (one row per thread, overwritten each step)."""
        self._write(
            "observations",
            {
                "thread_id": thread_id,
                "action_count": action_count,
                "observation": json.dumps(observation, separators=(",", ":")),
            },
            "thread_id",
        )

    def load_observation(self, thread_id: str) -> tuple[int, dict] | None:
        rows = list(
            self.db.query(
                "select action_count, observation from observations where thread_id = ?",
                [thread_id],
            )
        )
        if not rows:
            return None
        return rows[0]["action_count"], json.loads(rows[0]["observation"])

    def add_reflection(
        self, *, task: str, thread_id: str, text: str, won: bool, reward: float
    ) -> str:
        """Store one reflection per episode unless it nearly repeats a recent one.

        Returns "stored", "exists" (this episode already has one: a re-run node) or "duplicate".
        """
        text = text.strip()
        if not text:
            return "empty"
        with self._lock:
            if self.reflection_for(thread_id) is not None:
                return "exists"
            norm = _normalise(text)
            for prev in self.reflections(task, n=MAX_REFLECTIONS_PER_TASK):
                ratio = difflib.SequenceMatcher(None, norm, _normalise(prev.text)).ratio()
                if ratio >= DUPLICATE_RATIO:
                    return "duplicate"
            if self.read_only:
                return "read-only"
            self.db["reflections"].insert(
                {
                    "task": task,
                    "thread_id": thread_id,
                    "text": text,
                    "won": int(won),
                    "reward": reward,
                    "created_at": utc_now(),
                },
                pk="id",
            )
            self.trim(
                "reflections",
                key="id",
                where="task = ?",
                args=[task],
                order="id desc",
                keep=MAX_REFLECTIONS_PER_TASK,
            )
            return "stored"

    def maybe_save_trajectory(self, traj: Trajectory) -> bool:
        """Keep `traj` as the task's few-shot example if it beats the current best win."""
        best = self.best_trajectory(traj.task)
        if best is not None and best.thread_id == traj.thread_id:
            return True  # a re-run of the node that saved it
        if best is not None and (traj.grader_score, traj.reward) <= (
            best.grader_score,
            best.reward,
        ):
            return False
        self._write(
            "trajectories",
            {
                "task": traj.task,
                "thread_id": traj.thread_id,
                "reward": traj.reward,
                "grader_score": traj.grader_score,
                "action_log": json.dumps(traj.action_log),
                "final_message": traj.final_message,
                "updated_at": utc_now(),
            },
            "task",
        )
        return True

    def save_alpha(self, task: str, alpha: float, recent_win_rate: float, n_refl: int) -> None:
        self._write(
            "alpha",
            {
                "task": task,
                "alpha": alpha,
                "recent_win_rate": recent_win_rate,
                "n_reflections": n_refl,
                "updated_at": utc_now(),
            },
            "task",
        )

    # ------------------------------------------------------------------ reads
    def reflections(self, task: str, n: int = 4) -> list[Reflection]:
        """The last `n` reflections of a task, oldest first."""
        rows = self.db.query(
            "select * from reflections where task = ? order by id desc limit ?", [task, n]
        )
        out = [
            Reflection(r["id"], r["task"], r["thread_id"], r["text"], bool(r["won"]), r["reward"])
            for r in rows
        ]
        return list(reversed(out))

    def reflections_by_id(self, ids: Iterable[int]) -> list[Reflection]:
        out = []
        for rid in ids:
            rows = list(self.db.query("select * from reflections where id = ?", [rid]))
            if rows:
                r = rows[0]
                out.append(
                    Reflection(
                        r["id"], r["task"], r["thread_id"], r["text"], bool(r["won"]), r["reward"]
                    )
                )
        return out

    def reflection_for(self, thread_id: str) -> Reflection | None:
        rows = list(self.db.query("select * from reflections where thread_id = ?", [thread_id]))
        if not rows:
            return None
        r = rows[0]
        return Reflection(
            r["id"], r["task"], r["thread_id"], r["text"], bool(r["won"]), r["reward"]
        )

    def reflection_count(self, task: str) -> int:
        return self.db.execute(
            "select count(*) from reflections where task = ?", [task]
        ).fetchone()[0]

    def best_trajectory(self, task: str) -> Trajectory | None:
        rows = list(self.db.query("select * from trajectories where task = ?", [task]))
        if not rows:
            return None
        r = rows[0]
        return Trajectory(
            r["task"],
            r["thread_id"],
            r["reward"],
            r["grader_score"],
            json.loads(r["action_log"]),
            r["final_message"],
        )

    def recent_win_rate(self, task: str, n: int = RECENT_WINDOW) -> float:
        rows = list(
            self.db.query(
                f"select won from episodes where task = ? and status = 'finished' and {LEARNED} "
                "order by finished_at desc, rowid desc limit ?",
                [task, n],
            )
        )
        return sum(r["won"] for r in rows) / len(rows) if rows else 0.0

    def alpha(self, task: str) -> float | None:
        rows = list(self.db.query("select alpha from alpha where task = ?", [task]))
        return rows[0]["alpha"] if rows else None

    def episode(self, thread_id: str) -> dict | None:
        rows = list(self.db.query("select * from episodes where thread_id = ?", [thread_id]))
        return rows[0] if rows else None

    def run_episodes(self, run_id: str) -> list[dict]:
        return list(
            self.db.query("select * from episodes where run_id = ? order by episode", [run_id])
        )

    def run(self, run_id: str) -> dict | None:
        rows = list(self.db.query("select * from runs where run_id = ?", [run_id]))
        return rows[0] if rows else None

    def steps(self, thread_id: str) -> list[dict]:
        return list(
            self.db.query("select * from steps where thread_id = ? order by idx", [thread_id])
        )

    def summary(self) -> str:
        """Per task: the episodes the memory learned from (with the read-only ones played on
        it, e.g. evaluations and forks, in brackets), lessons, recent win rate, α, best win."""
        lines = ["Memory:"]
        for task in TASK_NAMES:
            n_ep, n_read = self.db.execute(
                f"select coalesce(sum({LEARNED}), 0), count(*) from episodes "
                "where task = ? and status = 'finished'",
                [task],
            ).fetchone()
            alpha = self.alpha(task)
            best = self.best_trajectory(task)
            others = f" (+{n_read - n_ep} read-only)" if n_read > n_ep else ""
            lines.append(
                f"  {task:6s}: episodes={n_ep}{others} reflections={self.reflection_count(task)} "
                f"recent_wr={self.recent_win_rate(task):.0%} "
                f"α={alpha if alpha is not None else ALPHA_FLOOR:.2f} "
                f"best={f'{best.reward:+.2f}' if best else 'none'}"
            )
        return "\n".join(lines)

    def close(self) -> None:
        self.db.conn.close()
