"""`rule_check`: the deterministic rule engine's proposal with a calibrated confidence."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.nodes.common import scores, thread_id_of, yields
from fakegang.graph.nodes.spec import NodeSpec
from fakegang.graph.state import EpisodeState, RuleRecord
from fakegang.tools.learning.credit import ALPHA_TRUSTED
from fakegang.tools.rules.engine import propose


def rule_check(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """The deterministic rule engine's proposal with a calibrated confidence."""
    ctx = runtime.context
    thread_id = thread_id_of(config)
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    proposal = propose(
        obs,
        state["starting_ids"],
        scores(state, ctx, thread_id),
        llm_verdicts=state.get("llm_verdicts") or {},
        unflagged=state.get("unflagged_ids") or (),
        pivot_yields=yields(state),
        wide_menu=state["alpha"] >= ALPHA_TRUSTED,
        hypotheses=[(a, at) for a, at in state.get("hypotheses") or ()],
    )
    rule: RuleRecord = {
        "action": proposal.action,
        "confidence": proposal.confidence,
        "reason": proposal.reason,
    }
    if proposal.hypothesis:
        rule["hypothesis"] = True
    return {"rule": rule, "choices": proposal.choices}


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    r = values.get("rule", {})
    return (
        f"proposes {r.get('action')} (confidence {r.get('confidence', 0):.2f}) "
        f"among {len(values.get('choices', []))} choices: {r.get('reason')}"
    )


def step_row(state: dict[str, Any]) -> dict[str, Any]:
    rule = state["rule"]
    return {
        "rule_action": rule["action"],
        "rule_confidence": rule["confidence"],
        "rule_reason": rule["reason"],
    }


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "rule": {
            "action": row["rule_action"],
            "confidence": row["rule_confidence"],
            "reason": row["rule_reason"],
        }
    }


SPEC = NodeSpec(
    name="rule_check",
    function=rule_check,
    writes=("rule", "choices"),
    summary=summary,
    panel="the rule engine",
    step_fields=("rule_action", "rule_confidence", "rule_reason"),
    step_row=step_row,
    from_row=from_row,
    custom_panel=True,
)
