"""The 'What the agent learned' block at the end of a training run."""

from __future__ import annotations

from fakegang.runs import learned
from fakegang.tools.learning.experience import WeightsVersion


def _version(learner: dict | None) -> WeightsVersion:
    return WeightsVersion(
        50, "hard", {}, {}, "t-50", 900, 12, None, model=object(), learner=learner
    )


def test_the_block_says_whether_the_operator_moved(monkeypatch) -> None:
    monkeypatch.setattr(learned.insights, "active", lambda memory, task, n: [])
    played = {"hard": [{"won": True}, {"won": False}]}
    tactics = {"hard": "adaptive"}

    monkeypatch.setattr(learned.experience, "latest_version", lambda m, t: _version(None))
    lines = learned.learned_lines(None, played, tactics)
    assert "fitted on 12 debriefs (no change of tactics detected)" in lines[1]
    assert lines[-1].strip() == "against the adaptive operator: 1/2 wins (50%)"

    moved = {"regime_episodes": 6, "insight": "this operator now hides creation dates"}
    monkeypatch.setattr(learned.experience, "latest_version", lambda m, t: _version(moved))
    lines = learned.learned_lines(None, played, tactics)
    assert "(6 since the operator last changed tactics)" in lines[1]
    assert lines[2].strip() == "this operator now hides creation dates"
