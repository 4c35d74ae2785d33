"""The trust weight α that hands decisions from the rules to the LLM as the LLM proves itself."""

from __future__ import annotations

ALPHA_FLOOR = 0.20
ALPHA_CAPS: dict[str, float] = {"easy": 0.50, "medium": 0.70, "hard": 0.85}
DEFAULT_CAP = 0.70
REFLECTIONS_FOR_FULL_TRUST = 4
#: The three outcomes of `arbitrate_mode`, with the `episodes` / metrics column counting each.
MODE_COLUMNS: dict[str, str] = {
    "agree": "mode_agree",
    "rule_override": "mode_rule",
    "llm": "mode_llm",
}


def compute_alpha(task: str, recent_win_rate: float, n_reflections: int) -> float:
    """α = 0.20 + min(1, reflections/4)·(0.80·recent_win_rate + 0.12), clamped to [0.20, cap]."""
    reflection_factor = min(1.0, n_reflections / REFLECTIONS_FOR_FULL_TRUST)
    raw = ALPHA_FLOOR + reflection_factor * (0.80 * recent_win_rate + 0.12)
    cap = ALPHA_CAPS.get(task, DEFAULT_CAP)
    return round(min(cap, max(ALPHA_FLOOR, raw)), 3)


def arbitrate_mode(
    rule_action: str, rule_confidence: float, llm_action: str | None, alpha: float
) -> str:
    """Which decider wins: `agree` (same action), `rule_override` (rule sure enough) or `llm`.

    Without a usable LLM proposal the rule action stands and counts as `rule_override`. So does
    an LLM `submit` the rule does not share: ending the episode is the one action that cannot be
    undone, and a premature submit loses it, while a late one costs a few steps
    (docs/design-decisions.md, "Numbers behind the constants"). (The proposal is still judged
    for credit.)
    """
    if llm_action is not None and llm_action == rule_action:
        return "agree"
    if rule_confidence >= alpha or llm_action is None:
        return "rule_override"
    if llm_action == "submit":
        return "rule_override"
    return "llm"
