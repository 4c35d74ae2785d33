"""The records of runs, episodes, steps and each episode's latest observation.

Every write is an upsert keyed by the run id or the episode's thread id (and step index), so a
graph node that re-runs after a crash overwrites its own rows instead of duplicating them.
"""

from __future__ import annotations

import json
from typing import Any

from fakegang.tools.memory.connection import MemoryConnection
from fakegang.tools.memory.schema import utc_now

__all__ = ["EpisodeRecords"]


class EpisodeRecords:
    """Runs, episodes, steps and observations over one memory connection."""

    def __init__(self, conn: MemoryConnection) -> None:
        self.conn = conn

    def upsert_run(self, row: dict[str, Any]) -> None:
        self.conn.upsert("runs", {**row, "updated_at": utc_now()}, "run_id")

    def upsert_episode(self, row: dict[str, Any]) -> None:
        self.conn.upsert("episodes", row, "thread_id")

    def upsert_step(self, row: dict[str, Any]) -> None:
        self.conn.upsert("steps", row, ("thread_id", "idx"))

    def save_observation(self, thread_id: str, action_count: int, observation: dict) -> None:
        """Keep the latest observation of an episode (one row per thread, overwritten each step)."""
        self.conn.upsert(
            "observations",
            {
                "thread_id": thread_id,
                "action_count": action_count,
                "observation": json.dumps(observation, separators=(",", ":")),
            },
            "thread_id",
        )

    def load_observation(self, thread_id: str) -> tuple[int, dict] | None:
        rows = self.conn.rows(
            "select action_count, observation from observations where thread_id = ?", [thread_id]
        )
        if not rows:
            return None
        return rows[0]["action_count"], json.loads(rows[0]["observation"])

    def run(self, run_id: str) -> dict | None:
        rows = self.conn.rows("select * from runs where run_id = ?", [run_id])
        return rows[0] if rows else None

    def episode(self, thread_id: str) -> dict | None:
        rows = self.conn.rows("select * from episodes where thread_id = ?", [thread_id])
        return rows[0] if rows else None

    def run_episodes(self, run_id: str) -> list[dict]:
        return self.conn.rows("select * from episodes where run_id = ? order by episode", [run_id])

    def steps(self, thread_id: str) -> list[dict]:
        return self.conn.rows("select * from steps where thread_id = ? order by idx", [thread_id])
