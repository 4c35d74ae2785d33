"""Task catalogue: sizes, budgets, win rules and evasion schedules.

Pure data with no OpenEnv import, so the generator, the agent and the CLI can read it cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    """One difficulty level of the environment."""

    name: str
    n_accounts: int
    gang_min: int
    gang_max: int
    max_steps: int
    n_starting: int
    win_recall: float
    win_precision: float
    evasion_steps: tuple[int, ...]
    description: str

    def won(self, recall: float, precision: float) -> bool:
        """The task's own win rule (shared by the terminal message and the grader)."""
        return recall >= self.win_recall and precision >= self.win_precision


TASKS: dict[str, TaskSpec] = {
    "easy": TaskSpec(
        name="easy",
        n_accounts=60,
        gang_min=10,
        gang_max=10,
        max_steps=30,
        n_starting=5,
        win_recall=0.8,
        win_precision=0.7,
        evasion_steps=(),
        description="~60 accounts, a ring of 10, no evasion, 30 steps: basic signal detection",
    ),
    "medium": TaskSpec(
        name="medium",
        n_accounts=250,
        gang_min=8,
        gang_max=12,
        max_steps=50,
        n_starting=8,
        win_recall=0.8,
        win_precision=0.7,
        evasion_steps=(25,),
        description="~250 accounts, a ring of 8-12 that adapts once (step 25), 50 steps",
    ),
    "hard": TaskSpec(
        name="hard",
        n_accounts=1000,
        gang_min=8,
        gang_max=14,
        max_steps=80,
        n_starting=12,
        win_recall=0.9,
        win_precision=0.8,
        evasion_steps=(20, 40, 60),
        description="~1000 accounts, a ring of 8-14 that adapts at steps 20, 40 and 60, 80 steps",
    ),
}

TASK_NAMES: tuple[str, ...] = tuple(TASKS)


class UnknownTaskError(ValueError):
    """Raised for a task name that is not in the catalogue; the message lists the valid ones."""


def get_task(name: str) -> TaskSpec:
    """Look a task up by name, with an error that names the valid tasks."""
    try:
        return TASKS[name]
    except KeyError:
        raise UnknownTaskError(
            f"unknown task {name!r}; valid tasks: {', '.join(TASK_NAMES)}"
        ) from None
