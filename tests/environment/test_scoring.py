"""Reward, grader and terminal message against hand-computed cases."""

from __future__ import annotations

import pytest

from fakegang_env import scoring
from fakegang_env.scoring import Outcome
from fakegang_env.tasks import TASKS

EASY, MEDIUM, HARD = TASKS["easy"], TASKS["medium"], TASKS["hard"]


def test_outcome_counts_and_rates():
    out = scoring.outcome({"a", "b", "x"}, {"a", "b", "c", "d"})
    assert (out.tp, out.fp, out.fn, out.ring_size) == (2, 1, 2, 4)
    assert out.recall == 0.5 and out.precision == 0.6667


def test_precision_is_zero_when_nothing_flagged():
    out = scoring.outcome(set(), {"a", "b"})
    assert out.precision == 0.0 and out.recall == 0.0


def test_reference_example_18_87():
    # easy, perfect flags, submitted after 13 steps: 10 + 5 + 3 + 1 = 19, minus 0.13 of steps
    out = Outcome(tp=10, fp=0, fn=0, ring_size=10)
    r = scoring.terminal_reward(EASY, out, forced=False, steps_remaining=17)
    assert r == 19.0
    msg = scoring.terminal_message(EASY, out, round(r - 0.13, 4))
    assert msg == "[WIN] TP=10 FP=0 FN=0 Recall=1.00 Precision=1.00 Episode reward=18.87"


@pytest.mark.parametrize(
    ("spec", "tp", "fp", "fn", "forced", "left", "expected"),
    [
        # win without the full ring: 9 - 0.5 - 0.3 + 5 = 13.2, no efficiency (14 < 15 left)
        (EASY, 9, 1, 1, False, 14, 13.2),
        # same with efficiency (15 >= 30/2): 14.2
        (EASY, 9, 1, 1, False, 15, 14.2),
        # partial: recall 0.8, precision 8/13 < 0.7: 8 - 2.5 - 0.6 + 2 = 6.9
        (MEDIUM, 8, 5, 2, False, 10, 6.9),
        # plain loss, no efficiency: 2 TP - 0.3 * 6 FN = 0.2
        (MEDIUM, 2, 0, 6, False, 0, 0.2),
        # forced loss: 0 - 3.0 - 2.0 = -5.0
        (EASY, 0, 0, 10, True, 0, -5.0),
        # forced win keeps its bonuses: 10 + 5 + 3 - 2 = 16
        (EASY, 10, 0, 0, True, 0, 16.0),
        # hard needs recall 0.9: 9/10 with precision 9/11 = 0.818 wins: 9 - 1 - 0.3 + 5 = 12.7
        (HARD, 9, 2, 1, False, 20, 12.7),
        # hard, recall 0.9 with precision 9/12 = 0.75 < 0.8 is partial: 9 - 1.5 - 0.3 + 2 + 1
        (HARD, 9, 3, 1, False, 40, 10.2),
        # hard, recall 0.8 is not even partial: 8 - 0.6 + 1 (efficiency, 40 >= 80/2) = 8.4
        (HARD, 8, 0, 2, False, 40, 8.4),
    ],
)
def test_terminal_reward_cases(spec, tp, fp, fn, forced, left, expected):
    out = Outcome(tp=tp, fp=fp, fn=fn, ring_size=tp + fn)
    assert scoring.terminal_reward(spec, out, forced=forced, steps_remaining=left) == expected


def test_grader_win_formula():
    out = Outcome(tp=10, fp=0, fn=0, ring_size=10)
    # 0.55 + 0.20 + 0.15 + 0.10 * 17/30
    assert scoring.grader_score(EASY, out, steps_remaining=17) == 0.9567
    out = Outcome(tp=8, fp=3, fn=2, ring_size=10)  # recall 0.8, precision 0.7273: a win on easy
    assert scoring.grader_score(EASY, out, steps_remaining=0) == round(
        0.55 + 0.2 * 0.8 + 0.15 * 0.7273, 4
    )


def test_grader_uses_the_tasks_own_win_rule():
    out = Outcome(tp=8, fp=0, fn=2, ring_size=10)
    assert scoring.won(MEDIUM, out) and not scoring.won(HARD, out)
    assert scoring.grader_score(HARD, out, steps_remaining=50) == 0.34  # 0.3*0.8 + 0.1*1.0
    assert scoring.terminal_message(HARD, out, 9.4).startswith("[LOSS] TP=8 FP=0 FN=2")
    assert scoring.terminal_message(MEDIUM, out, 9.4).startswith("[WIN] ")


def test_grader_bounds():
    best = Outcome(tp=12, fp=0, fn=0, ring_size=12)
    assert scoring.grader_score(MEDIUM, best, steps_remaining=50) == 1.0
    worst = Outcome(tp=0, fp=30, fn=12, ring_size=12)
    assert scoring.grader_score(MEDIUM, worst, steps_remaining=50) == 0.0


def test_message_rounds_to_two_decimals():
    out = Outcome(tp=2, fp=1, fn=1, ring_size=3)  # recall 0.6667, precision 0.6667
    msg = scoring.terminal_message(EASY, out, -1.23456)
    assert msg == "[LOSS] TP=2 FP=1 FN=1 Recall=0.67 Precision=0.67 Episode reward=-1.23"
