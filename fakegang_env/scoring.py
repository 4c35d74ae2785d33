"""Terminal reward, grader score and terminal message: pure functions of the episode outcome.

Kept apart from the episode mechanics so each formula can be checked by hand
(tests/environment/test_scoring.py).
All floats are rounded to 4 dp; the terminal message prints 2 dp.
"""

from __future__ import annotations

from dataclasses import dataclass

from fakegang_env.tasks import TaskSpec

WIN_BONUS = 5.0
FULL_RING_BONUS = 3.0
PARTIAL_BONUS = 2.0
EFFICIENCY_BONUS = 1.0
FORCED_PENALTY = -2.0
TP_REWARD, FP_PENALTY, FN_PENALTY = 1.0, -0.5, -0.3


@dataclass(frozen=True)
class Outcome:
    """Confusion counts of a submission and the rates derived from them."""

    tp: int
    fp: int
    fn: int
    ring_size: int

    @property
    def recall(self) -> float:
        return round(self.tp / self.ring_size, 4) if self.ring_size else 0.0

    @property
    def precision(self) -> float:
        flagged = self.tp + self.fp
        return round(self.tp / flagged, 4) if flagged else 0.0


def outcome(flagged: set[str] | list[str], gang: set[str] | list[str]) -> Outcome:
    """Count TP / FP / FN of a set of flagged ids against the hidden ring."""
    f, g = set(flagged), set(gang)
    return Outcome(tp=len(f & g), fp=len(f - g), fn=len(g - f), ring_size=len(g))


def won(spec: TaskSpec, out: Outcome) -> bool:
    """The task's own win rule (message and grader always agree)."""
    return spec.won(out.recall, out.precision)


def terminal_reward(spec: TaskSpec, out: Outcome, *, forced: bool, steps_remaining: int) -> float:
    """Reward added at submission, on top of the step costs already paid."""
    r = TP_REWARD * out.tp + FP_PENALTY * out.fp + FN_PENALTY * out.fn
    if won(spec, out):
        r += WIN_BONUS
        if out.tp == out.ring_size:
            r += FULL_RING_BONUS
    elif out.recall >= spec.win_recall:
        r += PARTIAL_BONUS
    if forced:
        r += FORCED_PENALTY
    elif steps_remaining >= 0.5 * spec.max_steps:
        r += EFFICIENCY_BONUS
    return round(r, 4)


def grader_score(spec: TaskSpec, out: Outcome, *, steps_remaining: int) -> float:
    """Score in [0, 1]: win -> 0.55 + 0.20 R + 0.15 P + 0.10 efficiency; else 0.30 R + 0.10 P."""
    if won(spec, out):
        eff = max(0.0, steps_remaining / spec.max_steps)
        s = 0.55 + 0.20 * out.recall + 0.15 * out.precision + 0.10 * eff
    else:
        s = 0.30 * out.recall + 0.10 * out.precision
    return round(min(1.0, max(0.0, s)), 4)


def terminal_message(spec: TaskSpec, out: Outcome, episode_return: float) -> str:
    """`[WIN] TP=10 FP=0 FN=0 Recall=1.00 Precision=1.00 Episode reward=18.87` (or `[LOSS] `)."""
    prefix = "[WIN]" if won(spec, out) else "[LOSS]"
    return (
        f"{prefix} TP={out.tp} FP={out.fp} FN={out.fn} Recall={out.recall:.2f} "
        f"Precision={out.precision:.2f} Episode reward={episode_return:.2f}"
    )
