"""α arithmetic (AGENT.md formula and caps) and the arbitration modes."""

from __future__ import annotations

import pytest

from fakegang.graph.nodes import arbitrate
from fakegang.tools.learning.alpha import arbitrate_mode, compute_alpha


@pytest.mark.parametrize(
    ("task", "win_rate", "n_refl", "expected"),
    [
        ("easy", 0.0, 0, 0.20),  # no reflections: floor
        ("easy", 1.0, 0, 0.20),  # wins without reflections do not raise trust
        ("medium", 0.0, 4, 0.32),  # 0.20 + 1·(0 + 0.12)
        ("medium", 0.2, 4, 0.48),  # 0.20 + 0.16 + 0.12
        ("hard", 0.2, 2, 0.34),  # 0.20 + 0.5·(0.16 + 0.12)
        ("easy", 0.5, 8, 0.50),  # 0.72 capped at easy's 0.50
        ("medium", 0.5, 8, 0.70),  # capped at 0.70
        ("hard", 0.5, 8, 0.72),  # under hard's 0.85 cap
        ("hard", 1.0, 8, 0.85),  # 1.12 capped at 0.85
    ],
)
def test_compute_alpha(task: str, win_rate: float, n_refl: int, expected: float) -> None:
    assert compute_alpha(task, win_rate, n_refl) == pytest.approx(expected)


def test_arbitration_modes() -> None:
    assert arbitrate_mode("flag u_1", 0.9, "flag u_1", 0.5) == "agree"
    assert arbitrate_mode("flag u_1", 0.9, "inspect u_2", 0.5) == "rule_override"
    assert arbitrate_mode("flag u_1", 0.3, "inspect u_2", 0.5) == "llm"
    # no usable LLM proposal: the rule stands whatever its confidence
    assert arbitrate_mode("flag u_1", 0.1, None, 0.5) == "rule_override"
    # confidence exactly α: the rule wins
    assert arbitrate_mode("submit", 0.5, "inspect u_2", 0.5) == "rule_override"
    # ending the episode needs the rule's agreement, however low the rule's confidence
    assert arbitrate_mode("inspect u_3", 0.1, "submit", 0.9) == "rule_override"
    assert arbitrate_mode("submit", 0.1, "submit", 0.9) == "agree"


def _arbitrated(rule: str, confidence: float, llm: str | None, verdicts: dict) -> dict:
    state = {
        "rule": {"action": rule, "confidence": confidence},
        "llm": {"status": "ok", "action": llm} if llm else {"status": "skipped"},
        "choices": [a for a in (rule, llm, "submit") if a],
        "alpha": 0.5,
        "action_count": 3,
        "max_actions": 90,
        "llm_verdicts": verdicts,
    }
    return arbitrate(state)  # type: ignore[arg-type]


def test_arbitrate_keeps_the_flag_decisions_the_llm_made() -> None:
    placed = _arbitrated("inspect u_2", 0.3, "flag u_9", {})
    assert placed["decision"]["mode"] == "llm" and placed["llm_verdicts"] == {"u_9": "flag"}
    # the rule's own flag, or an LLM flag the rule shares, is no verdict of the LLM's
    assert "llm_verdicts" not in _arbitrated("flag u_4", 0.9, None, {"u_9": "flag"})
    assert "llm_verdicts" not in _arbitrated("flag u_4", 0.3, "flag u_4", {"u_9": "flag"})
    # the LLM's later decision on the same account replaces the earlier one
    changed = _arbitrated("inspect u_2", 0.3, "unflag u_9", {"u_9": "flag", "u_7": "unflag"})
    assert changed["decision"]["action"] == "unflag u_9"
    assert changed["llm_verdicts"] == {"u_9": "unflag", "u_7": "unflag"}
