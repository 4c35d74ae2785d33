"""`llm_decide`: ask the chat model, when it can pay, for its choice among the legal actions."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.nodes.common import scores, thread_id_of
from fakegang.graph.nodes.spec import NodeSpec
from fakegang.graph.state import (
    BENCHED_REASON,
    DECIDING_CALLS,
    LLM_SUBMITS,
    EpisodeState,
    LlmRecord,
)
from fakegang.tools.learning.credit import exploration_weight, should_ask
from fakegang.tools.models import llm as llm_calls
from fakegang.tools.models import prompting

#: The LLM record's key marking an exploration call (judged after the debrief, never acted on);
#: stored under its first name so older checkpoints read the same.
EXPLORATION = "shadow"


def is_exploration(llm: dict[str, Any]) -> bool:
    return bool(llm.get(EXPLORATION))


def was_asked(llm: dict[str, Any]) -> bool:
    """The model was called (answered or failed), not skipped."""
    return llm.get("status") in ("ok", "error")


def llm_decide(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """Ask the chat model only while it can pay: the rule is unsure (confidence below α), the
    LLM's credit says its answers beat the rule's and its stake for the episode is not spent; or
    as an exploration call (judged, not acted on) on the small exploration share of steps,
    weighted toward the steps before the first flag and stopped once the LLM proposed to submit
    (`credit.exploration_weight`)."""
    ctx = runtime.context
    rule = state["rule"]
    thread_id = thread_id_of(config)
    stake = state.get("llm_stake")
    tally = state.get("tally", {})
    said_submit = tally.get(LLM_SUBMITS, 0) > 0
    ask, exploring, why = should_ask(
        rule["confidence"],
        state["alpha"],
        state.get("llm_gain", 1.0),
        state.get("explore_rate", 0.0)
        * exploration_weight(
            state["view"]["flagged"], said_submit, state.get("explore_report_weight", 1.0)
        ),
        # keyed by what the episode is, not its thread id: a resumed or replayed run (new ids)
        # explores on the same steps
        f"{state['task']}:{state.get('seed')}:{state.get('episode', 0)}",
        state["action_count"],
        None if stake is None else stake - tally.get(DECIDING_CALLS, 0),
    )
    if not ask:
        if said_submit:
            why += "; no exploration after the LLM proposed to submit"
        return {"llm": {"status": "skipped", "reason": why}}
    if state.get("llm_off"):  # it timed out earlier: the rules decide the rest of the episode
        return {"llm": {"status": "skipped", "reason": state["llm_off"]}}
    memory = resources.memory(ctx)
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    likelihood, frontier = scores(state, ctx, thread_id)
    lessons = memory.reflections_by_id(state.get("lesson_ids", []))
    best = memory.best_trajectory(state["task"])
    few_shot = best if best and best.thread_id == state.get("few_shot_thread") else None
    case = prompting.render_case(obs, likelihood, frontier)
    system, user = prompting.decision_messages(
        lessons, few_shot, case, state["choices"], state.get("insights", [])
    )
    try:
        model = resources.chat_model(ctx)
    except Exception as exc:  # a model that cannot be built must not end the episode
        return {
            "llm": {
                "status": "error",
                "error": f"model unavailable: {exc}"[:300],
                "error_class": "model unavailable",
            }
        }
    result = llm_calls.decide(
        model,
        system=system,
        user=user,
        choices=state["choices"],
        settings=ctx.model_settings(),
    )
    update: dict[str, Any] = {}
    if result.timed_out:  # asking again would stall every later step the same way
        update["llm_off"] = (
            f"{BENCHED_REASON}{state['action_count']}: the rules decide the rest of this episode"
        )
    answer: LlmRecord = {
        "status": "ok" if result.ok else "error",
        EXPLORATION: exploring,  # type: ignore[misc]
        "action": result.value if result.ok else None,
        "reason": result.reason[:200],
        "error": result.error,
        "error_class": result.error_class,
        "latency_s": round(result.latency_s, 3),
        "tokens": result.tokens_in + result.tokens_out,
        "prompt_tokens": result.tokens_in,
        "prompt_tokens_reused": result.prompt_tokens_reused,
    }
    return {**update, "llm": answer}


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    llm = values.get("llm", {})
    status = llm.get("status")
    if status == "skipped":
        return f"skipped: {llm.get('reason')}"
    if status == "ok":
        return (
            f"proposes {llm.get('action')} ({llm.get('latency_s')} s, "
            f"{llm.get('tokens')} tokens): {llm.get('reason')}"
        )
    return f"error: {llm.get('error')}"


STEP_FIELDS: tuple[str, ...] = (
    "llm_status",
    "llm_action",
    "llm_reason",
    "llm_error",
    "llm_error_class",
    "llm_latency_s",
    "llm_tokens",
    "llm_prompt_tokens",
    "llm_prompt_tokens_reused",
)


def step_row(state: dict[str, Any]) -> dict[str, Any]:
    llm = state.get("llm", {})
    return {
        "llm_status": llm.get("status", "skipped"),
        **{column: llm.get(column[len("llm_") :]) for column in STEP_FIELDS[1:]},
    }


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "llm": {
            "status": row["llm_status"],
            "action": row["llm_action"],
            "reason": row["llm_reason"],
            "error": row["llm_error"],
            "latency_s": row["llm_latency_s"],
            "tokens": row["llm_tokens"],
        }
    }


SPEC = NodeSpec(
    name="llm_decide",
    function=llm_decide,
    writes=("llm",),
    summary=summary,
    panel="the LLM",
    step_fields=STEP_FIELDS,
    step_row=step_row,
    from_row=from_row,
    custom_panel=True,
)
