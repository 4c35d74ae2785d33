"""The lessons the agent keeps between episodes: reflections and each task's best trajectory."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from fakegang.tools.memory.connection import MemoryConnection
from fakegang.tools.memory.schema import utc_now

__all__ = ["DUPLICATE_RATIO", "MAX_REFLECTIONS_PER_TASK", "Lessons", "Reflection", "Trajectory"]

#: Reflections kept per task; older ones are deleted (prompts use only the last few).
MAX_REFLECTIONS_PER_TASK = 40
#: Similarity (difflib ratio on normalised text) above which a reflection counts as a duplicate.
DUPLICATE_RATIO = 0.9


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


def _reflection(r: dict) -> Reflection:
    return Reflection(r["id"], r["task"], r["thread_id"], r["text"], bool(r["won"]), r["reward"])


class Lessons:
    """Reflections and best trajectories over one memory connection."""

    def __init__(self, conn: MemoryConnection) -> None:
        self.conn = conn

    def add_reflection(
        self, *, task: str, thread_id: str, text: str, won: bool, reward: float
    ) -> str:
        """Store one reflection per episode unless it nearly repeats a recent one.

        Returns "stored", "exists" (this episode already has one: a re-run node) or "duplicate".
        """
        text = text.strip()
        if not text:
            return "empty"
        with self.conn.locked():
            if self.reflection_for(thread_id) is not None:
                return "exists"
            norm = _normalise(text)
            for prev in self.reflections(task, n=MAX_REFLECTIONS_PER_TASK):
                ratio = difflib.SequenceMatcher(None, norm, _normalise(prev.text)).ratio()
                if ratio >= DUPLICATE_RATIO:
                    return "duplicate"
            if self.conn.read_only:
                return "read-only"
            self.conn.db["reflections"].insert(
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
            self.conn.trim(
                "reflections",
                key="id",
                where="task = ?",
                args=[task],
                order="id desc",
                keep=MAX_REFLECTIONS_PER_TASK,
            )
            return "stored"

    def reflections(self, task: str, n: int = 4) -> list[Reflection]:
        """The last `n` reflections of a task, oldest first."""
        rows = self.conn.rows(
            "select * from reflections where task = ? order by id desc limit ?", [task, n]
        )
        return [_reflection(r) for r in reversed(rows)]

    def reflections_by_id(self, ids: Iterable[int]) -> list[Reflection]:
        out = []
        for rid in ids:
            rows = self.conn.rows("select * from reflections where id = ?", [rid])
            out += [_reflection(r) for r in rows]
        return out

    def reflection_for(self, thread_id: str) -> Reflection | None:
        rows = self.conn.rows("select * from reflections where thread_id = ?", [thread_id])
        return _reflection(rows[0]) if rows else None

    def reflection_count(self, task: str) -> int:
        return self.conn.db.execute(
            "select count(*) from reflections where task = ?", [task]
        ).fetchone()[0]

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
        self.conn.upsert(
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

    def best_trajectory(self, task: str) -> Trajectory | None:
        rows = self.conn.rows("select * from trajectories where task = ?", [task])
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
