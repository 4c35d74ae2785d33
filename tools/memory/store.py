"""Long-term memory of the agent: one connection to its SQLite file and the repositories over it.

Everything the agent learns between episodes lives here (runs, episodes, steps, reflections, best
trajectories, α per task), in the same database file as LangGraph's checkpoints. `Memory` is the
connection layer (tools/memory/connection.py: lock, transactions, migrations on open) holding one
repository per kind of record: `records` (runs, episodes, steps, observations), `lessons`
(reflections, best trajectories) and `alphas` (α and win rates). The learning stores of
tools/learning and the run records of fakegang/runs/records.py take the same `Memory`. Its
methods named after a record (`upsert_step`, `add_reflection`, `alpha`, ...) hand the call to
the repository that owns it, so the graph's nodes keep one object to pass around.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fakegang.tools.learning.alpha import ALPHA_FLOOR
from fakegang.tools.memory.alphas import EVAL_RUN_PREFIX, LEARNED, RECENT_WINDOW, Alphas
from fakegang.tools.memory.connection import MemoryConnection
from fakegang.tools.memory.episode_records import EpisodeRecords
from fakegang.tools.memory.lessons import Lessons, Reflection, Trajectory
from fakegang.tools.memory.schema import utc_now
from fakegang_env.tasks import TASK_NAMES

__all__ = [
    "EVAL_RUN_PREFIX",
    "LEARNED",
    "RECENT_WINDOW",
    "Memory",
    "Reflection",
    "Trajectory",
    "utc_now",
]


class Memory(MemoryConnection):
    """The agent's memory database (tools/memory/schema.py). Safe to share between threads of
    one process."""

    def __init__(
        self, path: str | Path, *, read_only: bool = False, file_read_only: bool = False
    ) -> None:
        super().__init__(path, read_only=read_only, file_read_only=file_read_only)
        self.records = EpisodeRecords(self)
        self.lessons = Lessons(self)
        self.alphas = Alphas(self)

    # ------------------------------------------------------------ runs, episodes, steps
    def upsert_run(self, row: dict[str, Any]) -> None:
        self.records.upsert_run(row)

    def upsert_episode(self, row: dict[str, Any]) -> None:
        self.records.upsert_episode(row)

    def upsert_step(self, row: dict[str, Any]) -> None:
        self.records.upsert_step(row)

    def save_observation(self, thread_id: str, action_count: int, observation: dict) -> None:
        self.records.save_observation(thread_id, action_count, observation)

    def load_observation(self, thread_id: str) -> tuple[int, dict] | None:
        return self.records.load_observation(thread_id)

    def run(self, run_id: str) -> dict | None:
        return self.records.run(run_id)

    def episode(self, thread_id: str) -> dict | None:
        return self.records.episode(thread_id)

    def run_episodes(self, run_id: str) -> list[dict]:
        return self.records.run_episodes(run_id)

    def steps(self, thread_id: str) -> list[dict]:
        return self.records.steps(thread_id)

    # ------------------------------------------------------------ lessons
    def add_reflection(
        self, *, task: str, thread_id: str, text: str, won: bool, reward: float
    ) -> str:
        return self.lessons.add_reflection(
            task=task, thread_id=thread_id, text=text, won=won, reward=reward
        )

    def reflections(self, task: str, n: int = 4) -> list[Reflection]:
        return self.lessons.reflections(task, n)

    def reflections_by_id(self, ids: Iterable[int]) -> list[Reflection]:
        return self.lessons.reflections_by_id(ids)

    def reflection_for(self, thread_id: str) -> Reflection | None:
        return self.lessons.reflection_for(thread_id)

    def reflection_count(self, task: str) -> int:
        return self.lessons.reflection_count(task)

    def maybe_save_trajectory(self, traj: Trajectory) -> bool:
        return self.lessons.maybe_save_trajectory(traj)

    def best_trajectory(self, task: str) -> Trajectory | None:
        return self.lessons.best_trajectory(task)

    # ------------------------------------------------------------ α
    def save_alpha(self, task: str, alpha: float, recent_win_rate: float, n_refl: int) -> None:
        self.alphas.save_alpha(task, alpha, recent_win_rate, n_refl)

    def alpha(self, task: str) -> float | None:
        return self.alphas.alpha(task)

    def recent_win_rate(self, task: str, n: int = RECENT_WINDOW) -> float:
        return self.alphas.recent_win_rate(task, n)

    def summary(self) -> str:
        """Per task: the episodes the memory learned from (with the read-only ones played on
        it, e.g. evaluations and forks, in brackets), lessons, recent win rate, α, best win."""
        lines = ["Memory:"]
        for task in TASK_NAMES:
            n_ep, n_read = self.alphas.episode_counts(task)
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
