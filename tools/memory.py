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
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from fakegang.tools.database_check import stamp_schema
from fakegang.tools.episode_row import EPISODE_SCHEMA

#: Reflections kept per task; older ones are deleted (prompts use only the last few).
MAX_REFLECTIONS_PER_TASK = 40
#: Similarity (difflib ratio on normalised text) above which a reflection counts as a duplicate.
DUPLICATE_RATIO = 0.9
#: Episodes of a task that make up the "recent" win rate.
RECENT_WINDOW = 10
#: Run ids of `fakegang eval`: their episodes are recorded but never count towards learning.
EVAL_RUN_PREFIX = "eval-"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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


class Memory:
    """The agent's memory tables. Safe to share between threads of one process."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process, no fsync
        self._lock = threading.RLock()
        self.db = _LockedDatabase(conn)
        self.db.lock = self._lock
        self._ensure_schema()

    # ------------------------------------------------------------------ schema
    def _ensure_schema(self) -> None:
        with self._lock:
            t = self.db.table
            t("runs").create(
                {
                    "run_id": str,
                    "started_at": str,
                    "updated_at": str,
                    "status": str,
                    "model": str,
                    "settings": str,
                    "episodes_total": int,
                },
                pk="run_id",
                if_not_exists=True,
            )
            t("episodes").create(
                EPISODE_SCHEMA,
                pk="thread_id",
                if_not_exists=True,
            )
            t("steps").create(
                {
                    "thread_id": str,
                    "idx": int,
                    "action": str,
                    "mode": str,
                    "rule_action": str,
                    "rule_confidence": float,
                    "rule_reason": str,
                    "llm_status": str,
                    "llm_action": str,
                    "llm_reason": str,
                    "llm_error": str,
                    "llm_latency_s": float,
                    "llm_tokens": int,
                    "llm_prompt_tokens": int,
                    "llm_prompt_tokens_reused": int,
                    "alpha": float,
                    "reward": float,
                    "message": str,
                    "steps_remaining": int,
                },
                pk=("thread_id", "idx"),
                if_not_exists=True,
            )
            t("reflections").create(
                {
                    "id": int,
                    "task": str,
                    "thread_id": str,
                    "text": str,
                    "won": int,
                    "reward": float,
                    "created_at": str,
                },
                pk="id",
                if_not_exists=True,
            )
            t("trajectories").create(
                {
                    "task": str,
                    "thread_id": str,
                    "reward": float,
                    "grader_score": float,
                    "action_log": str,
                    "final_message": str,
                    "updated_at": str,
                },
                pk="task",
                if_not_exists=True,
            )
            t("alpha").create(
                {
                    "task": str,
                    "alpha": float,
                    "recent_win_rate": float,
                    "n_reflections": int,
                    "updated_at": str,
                },
                pk="task",
                if_not_exists=True,
            )
            t("observations").create(
                {"thread_id": str, "action_count": int, "observation": str},
                pk="thread_id",
                if_not_exists=True,
            )
            # databases written before these columns existed get them added (values stay NULL)
            self._add_missing_columns(
                "steps", {"llm_prompt_tokens": int, "llm_prompt_tokens_reused": int}
            )
            self.db["episodes"].create_index(["task", "finished_at"], if_not_exists=True)
            self.db["episodes"].create_index(["run_id", "episode"], if_not_exists=True)
            self.db["reflections"].create_index(["task", "id"], if_not_exists=True)
            self.db["reflections"].create_index(["thread_id"], unique=True, if_not_exists=True)
            stamp_schema(self.db.conn)  # schema version + application id for `fakegang db check`

    def _add_missing_columns(self, table: str, columns: dict[str, type]) -> None:
        existing = self.db[table].columns_dict
        for name, kind in columns.items():
            if name not in existing:
                self.db[table].add_column(name, kind)

    # ------------------------------------------------------------------ writes
    def _write(self, table: str, row: dict[str, Any], pk: str | tuple[str, ...]) -> None:
        if self.read_only:
            return
        with self._lock:
            self.db[table].upsert(row, pk=pk)

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
            self._trim_reflections(task)
            return "stored"

    def _trim_reflections(self, task: str) -> None:
        ids = [
            r["id"]
            for r in self.db.query(
                "select id from reflections where task = ? order by id desc limit -1 offset ?",
                [task, MAX_REFLECTIONS_PER_TASK],
            )
        ]
        for rid in ids:
            self.db["reflections"].delete(rid)

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
                "select won from episodes where task = ? and status = 'finished' "
                "and coalesce(run_id, '') not like ? "
                "order by finished_at desc, rowid desc limit ?",
                [task, EVAL_RUN_PREFIX + "%", n],
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
        lines = ["Memory:"]
        for task in ("easy", "medium", "hard"):
            n_ep = self.db.execute(
                "select count(*) from episodes where task = ? and status = 'finished'", [task]
            ).fetchone()[0]
            alpha = self.alpha(task)
            best = self.best_trajectory(task)
            lines.append(
                f"  {task:6s}: episodes={n_ep} reflections={self.reflection_count(task)} "
                f"recent_wr={self.recent_win_rate(task):.0%} "
                f"α={alpha if alpha is not None else 0.20:.2f} "
                f"best={f'{best.reward:+.2f}' if best else 'none'}"
            )
        return "\n".join(lines)

    # ------------------------------------------------------------------ run management
    # (added for `fakegang runs/resume/fork`; their two tables are created on first use)
    def _ensure_run_tables(self) -> None:
        with self._lock:
            self.db["run_owners"].create(
                {"run_id": str, "pid": int, "host": str, "claimed_at": str},
                pk="run_id",
                if_not_exists=True,
            )
            self.db["forks"].create(
                {
                    "thread_id": str,
                    "parent_thread_id": str,
                    "at_index": int,
                    "action": str,
                    "original_action": str,
                    "run_id": str,
                    "created_at": str,
                },
                pk="thread_id",
                if_not_exists=True,
            )

    def list_runs(self) -> list[dict]:
        """Every run, oldest first."""
        return list(self.db.query("select * from runs order by started_at, rowid"))

    def set_run_owner(self, run_id: str, pid: int, host: str) -> None:
        """Record which process is playing `run_id` (so a live run is not resumed twice)."""
        self._ensure_run_tables()
        self._write(
            "run_owners",
            {"run_id": run_id, "pid": pid, "host": host, "claimed_at": utc_now()},
            "run_id",
        )

    def run_owner(self, run_id: str) -> dict | None:
        self._ensure_run_tables()
        rows = list(self.db.query("select * from run_owners where run_id = ?", [run_id]))
        return rows[0] if rows else None

    def record_fork(self, row: dict[str, Any]) -> None:
        self._ensure_run_tables()
        self._write("forks", row, "thread_id")

    def fork_of(self, thread_id: str) -> dict | None:
        """The fork record of `thread_id` if that episode is a fork."""
        self._ensure_run_tables()
        rows = list(self.db.query("select * from forks where thread_id = ?", [thread_id]))
        return rows[0] if rows else None

    def forks_of(self, parent_thread_id: str) -> list[dict]:
        self._ensure_run_tables()
        return list(
            self.db.query(
                "select * from forks where parent_thread_id = ? order by created_at, rowid",
                [parent_thread_id],
            )
        )

    def copy_steps(self, src_thread_id: str, dst_thread_id: str, below_idx: int) -> int:
        """Copy the step rows of `src` with idx < `below_idx` to `dst` (a fork's shared past)."""
        rows = [
            {**r, "thread_id": dst_thread_id}
            for r in self.steps(src_thread_id)
            if r["idx"] < below_idx
        ]
        if rows and not self.read_only:
            with self._lock:
                self.db["steps"].upsert_all(rows, pk=("thread_id", "idx"))
        return len(rows)

    def forget_thread(self, thread_id: str) -> None:
        """Delete a thread's steps/observation/episode/fork rows (an aborted fork)."""
        if self.read_only:
            return
        self._ensure_run_tables()
        with self._lock, self.db.conn:
            for table in ("steps", "observations", "episodes", "forks"):
                self.db.execute(f"delete from {table} where thread_id = ?", [thread_id])

    def close(self) -> None:
        self.db.conn.close()
