"""Has the operator moved? A drift test on how well the pinned model predicted each debrief.

After every episode the model the episode pinned is scored on the ring members its debrief labels
(one error per member row: 1 - the probability it gave). While the operator keeps its playbook
those errors stay near zero; when it hides what betrayed its members they jump for the round it
moves, and fall again as the learner catches up. Page-Hinkley (river's `PageHinkley`, a
cumulative-sum test for a rise in a stream's mean, Page 1954) in its `up` mode sees the jump: the
episode where it fires starts the current regime, and rows of the episodes before it belong to a
playbook the operator has left (the learner down-weights them).

The test is re-run over the stored errors of the task's recent episodes at every refit, so it is a
pure function of the debriefs (resume, replay and fork see the same cut). Why Page-Hinkley and not
ADWIN or KSWIN: docs/design-decisions.md, "The learner of the current operator".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Page-Hinkley's alarm level (λ) on the cumulative rise of member errors, and the errors it
#: reads before it may fire (about one debrief's members).
THRESHOLD = 3.0
MIN_ERRORS = 30


@dataclass(frozen=True)
class Drift:
    """Where the current regime starts in the episodes tested, and the mean error before and
    from there on."""

    regime_start: int
    before: float
    after: float

    @property
    def moved(self) -> bool:
        return self.regime_start > 0


def detect(errors_per_episode: Sequence[Sequence[float]]) -> Drift:
    """The episode of the last rise the test fires on (0: none) in episodes oldest first."""
    from river.drift import PageHinkley  # lazy: river imports pandas and scipy (seconds)

    test = PageHinkley(mode="up", threshold=THRESHOLD, min_instances=MIN_ERRORS)
    start = 0
    for episode, errors in enumerate(errors_per_episode):
        for e in errors:
            test.update(float(e))
            if test.drift_detected:
                start = episode
    before = [float(e) for errors in errors_per_episode[:start] for e in errors]
    after = [float(e) for errors in errors_per_episode[start:] for e in errors]
    return Drift(start, round(_mean(before), 4), round(_mean(after), 4))


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0
