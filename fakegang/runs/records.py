"""Run-management records in the agent's memory: run ownership and forks (`fakegang runs`,
`resume`, `fork`, `prune`), and the step copies and deletions forks need.

A repository over the agent's `Memory` connection (tools/memory/connection.py), like the memory's
own: the tables live in the same file (the memory's migrations create them), but only run
management reads or writes them, so the agent's packages never import this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlite_utils

from fakegang.tools.memory.schema import utc_now

if TYPE_CHECKING:
    from fakegang.tools.memory.store import Memory

__all__ = ["RunRecords"]


class RunRecords:
    """Run ownership and fork records of one memory database."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.db: sqlite_utils.Database = memory.db

    def list_runs(self) -> list[dict]:
        """Every run, oldest first."""
        return list(self.db.query("select * from runs order by started_at, rowid"))

    def set_run_owner(self, run_id: str, pid: int, host: str) -> None:
        """Record which process is playing `run_id` (so a live run is not resumed twice)."""
        self.memory.upsert(
            "run_owners",
            {"run_id": run_id, "pid": pid, "host": host, "claimed_at": utc_now()},
            "run_id",
        )

    def run_owner(self, run_id: str) -> dict | None:
        rows = list(self.db.query("select * from run_owners where run_id = ?", [run_id]))
        return rows[0] if rows else None

    def record_fork(self, row: dict[str, Any]) -> None:
        self.memory.upsert("forks", row, "thread_id")

    def fork_of(self, thread_id: str) -> dict | None:
        """The fork record of `thread_id` if that episode is a fork."""
        rows = list(self.db.query("select * from forks where thread_id = ?", [thread_id]))
        return rows[0] if rows else None

    def forks_of(self, parent_thread_id: str) -> list[dict]:
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
            for r in self.memory.steps(src_thread_id)
            if r["idx"] < below_idx
        ]
        if rows and not self.memory.read_only:
            with self.memory.locked():
                self.db["steps"].upsert_all(rows, pk=("thread_id", "idx"))
        return len(rows)

    def forget_thread(self, thread_id: str) -> None:
        """Delete a thread's steps/observation/episode/fork rows (an aborted fork)."""
        if self.memory.read_only:
            return
        with self.memory.locked(), self.db.conn:
            for table in ("steps", "observations", "episodes", "forks"):
                self.db.execute(f"delete from {table} where thread_id = ?", [thread_id])
