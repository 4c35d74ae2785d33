"""α per task (the weight of the LLM against the rules) and the recent win rate it follows."""

from __future__ import annotations

from fakegang.tools.memory.connection import MemoryConnection
from fakegang.tools.memory.schema import utc_now

__all__ = ["EVAL_RUN_PREFIX", "LEARNED", "RECENT_WINDOW", "Alphas"]

#: Episodes of a task that make up the "recent" win rate.
RECENT_WINDOW = 10
#: Run ids of `fakegang eval`: their episodes are recorded but never count towards learning.
EVAL_RUN_PREFIX = "eval-"
#: SQL condition on `episodes`: the episode wrote into the memory training reads.
LEARNED = "learns = 1"


class Alphas:
    """α per task and the win rates it is computed from, over one memory connection."""

    def __init__(self, conn: MemoryConnection) -> None:
        self.conn = conn

    def save_alpha(self, task: str, alpha: float, recent_win_rate: float, n_refl: int) -> None:
        self.conn.upsert(
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

    def alpha(self, task: str) -> float | None:
        rows = self.conn.rows("select alpha from alpha where task = ?", [task])
        return rows[0]["alpha"] if rows else None

    def recent_win_rate(self, task: str, n: int = RECENT_WINDOW) -> float:
        rows = self.conn.rows(
            f"select won from episodes where task = ? and status = 'finished' and {LEARNED} "
            "order by finished_at desc, rowid desc limit ?",
            [task, n],
        )
        return sum(r["won"] for r in rows) / len(rows) if rows else 0.0

    def episode_counts(self, task: str) -> tuple[int, int]:
        """(finished episodes the memory learned from, all finished episodes) of `task`."""
        learned, played = self.conn.db.execute(
            f"select coalesce(sum({LEARNED}), 0), count(*) from episodes "
            "where task = ? and status = 'finished'",
            [task],
        ).fetchone()
        return learned, played
