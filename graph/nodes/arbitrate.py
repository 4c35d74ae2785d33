"""`arbitrate`: pick the action the environment gets, and record who decided it."""

from __future__ import annotations

from typing import Any

from fakegang.graph.nodes.llm_decide import is_exploration, was_asked
from fakegang.graph.nodes.spec import NodeSpec
from fakegang.graph.state import DECIDING_CALLS, LLM_SUBMITS, DecisionRecord, EpisodeState
from fakegang.tools.learning.alpha import arbitrate_mode
from fakegang.tools.rules.actions import parse_action

#: Who decided an action (the decision's `mode`, the steps' `mode` column); a fork's decision
#: says `fork` (fakegang/runs/fork.py).
AGREE = "agree"  # the rule and the LLM chose the same action
LLM = "llm"  # the LLM's choice
RULE_OVERRIDE = "rule_override"  # the rule's choice over an LLM that was asked
RULE_ALONE = "rule_alone"  # the rule's choice, the LLM not asked

#: The tally key (and so the episodes' `mode_*` column) each mode counts under: the `mode_rule`
#: column counts every action the rule decided, asked or not.
TALLY_KEY: dict[str, str] = {RULE_ALONE: RULE_OVERRIDE}

#: The LLM may flag or unflag one account this many times per episode (a mistake and its fix).
LLM_FLIPS_PER_ACCOUNT = 2


def decision_source(mode: str | None, llm: dict[str, Any] | None) -> str | None:
    """The mode under today's names: databases written before `rule_alone` existed recorded
    `rule_override` also when the LLM was not asked; `llm` (its record) tells the two apart."""
    if mode == RULE_OVERRIDE and llm is not None and not was_asked(llm):
        return RULE_ALONE
    return mode


def arbitrate(state: EpisodeState) -> dict:
    """Pick the action: `agree`, `rule_override` (rule confident or LLM unusable), `rule_alone`
    (the LLM was not asked) or `llm`.

    A flag or unflag the LLM decided goes into `llm_verdicts`, which the rule does not reverse
    by itself (tools/rules/engine.py `propose`); the LLM's next decision on that account replaces
    it. A hypothesis the rule proposed and that was played goes into `hypotheses`, so the rule
    holds it and tries at most `HYPOTHESES`."""
    rule = state["rule"]
    llm = state.get("llm", {})
    llm_action = llm.get("action") if llm.get("status") == "ok" else None
    if llm_action is not None and llm_action not in state["choices"]:
        llm_action = None  # never act on something outside the legal menu
    mode = arbitrate_mode(rule["action"], rule["confidence"], llm_action, state["alpha"])
    if mode == LLM and is_exploration(llm):
        mode = RULE_OVERRIDE  # an exploration call is judged after the debrief, never acted on
    action = llm_action if mode == LLM else rule["action"]
    flips = state.get("llm_flips") or {}
    if mode == LLM and _cycling(action, flips):
        action, mode = rule["action"], RULE_OVERRIDE
    if state["action_count"] >= state["max_actions"]:
        action, mode = "submit", RULE_OVERRIDE
    mode = decision_source(mode, llm) or mode
    update: dict[str, Any] = {}
    kind, account = parse_action(action)
    if mode == LLM and kind in ("flag", "unflag") and account:
        update["llm_verdicts"] = {**(state.get("llm_verdicts") or {}), account: kind}
        update["llm_flips"] = {**flips, account: flips.get(account, 0) + 1}
    unflagged = state.get("unflagged_ids") or []
    if kind == "unflag" and account and account not in unflagged:
        update["unflagged_ids"] = [*unflagged, account]
    if rule.get("hypothesis") and action == rule["action"] and account:
        update["hypotheses"] = [*(state.get("hypotheses") or []), [account, state["step_count"]]]
    tally = {TALLY_KEY.get(mode, mode): 1}  # increments: the state's reducer adds them up
    if was_asked(llm):
        tally["llm_calls"] = 1
        tally["llm_tokens"] = int(llm.get("tokens") or 0)
        if not is_exploration(llm):
            tally[DECIDING_CALLS] = 1
        if llm.get("action") == "submit":
            tally[LLM_SUBMITS] = 1
    if llm.get("status") == "error":
        tally["llm_errors"] = 1
    decision: DecisionRecord = {"index": state["action_count"], "action": action, "mode": mode}
    return {**update, "decision": decision, "tally": tally}


def _cycling(action: str, flips: dict[str, int]) -> bool:
    """An LLM flag or unflag of an account it already flipped LLM_FLIPS_PER_ACCOUNT times this
    episode: a free flag/unflag cycle, so the rule plays instead (a trusted model drawing the same
    unflag after each re-flag looped until the action cap; docs/design-decisions.md)."""
    kind, account = parse_action(action)
    return kind in ("flag", "unflag") and flips.get(account or "", 0) >= LLM_FLIPS_PER_ACCOUNT


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    d = values.get("decision", {})
    mode = decision_source(d.get("mode"), values.get("llm"))
    return f"{mode} → {d.get('action')} (α {values.get('alpha', 0):.2f})"


def normalise(outputs: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    decision = outputs.get("decision")
    if not decision:
        return outputs
    mode = decision_source(decision.get("mode"), values.get("llm"))
    return {**outputs, "decision": {**decision, "mode": mode}}


def step_row(state: dict[str, Any]) -> dict[str, Any]:
    decision = state["decision"]
    return {"action": decision["action"], "mode": decision["mode"], "alpha": state["alpha"]}


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    mode = decision_source(row["mode"], {"status": row.get("llm_status") or "skipped"})
    return {
        "decision": {"index": row["idx"], "action": row["action"], "mode": mode},
        "alpha": row["alpha"],
    }


SPEC = NodeSpec(
    name="arbitrate",
    function=arbitrate,
    writes=("decision", "alpha"),
    summary=summary,
    panel="who decides",
    step_fields=("action", "mode", "alpha"),
    step_row=step_row,
    from_row=from_row,
    custom_panel=True,
    normalise=normalise,
)
