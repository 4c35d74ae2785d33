"""The six nodes of the episode graph (`reflect`, the last, lives in graph/reflection.py).

observe → rule_check → llm_decide → arbitrate → step_env → (observe | reflect).

Every node may run twice: LangGraph re-runs a node that was interrupted by a crash from its first
line. Side effects are therefore idempotent: the environment step carries its action index (the
server answers a repeat instead of applying it), and memory writes are upserts keyed by thread id
and step index.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from fakegang.graph import learning, resources
from fakegang.graph.context import Context
from fakegang.graph.recovery import rebuild_for_state
from fakegang.graph.state import (
    BENCHED_REASON,
    LLM_SUBMITS,
    TALLY_KEYS,
    TRUSTED_CALLS,
    EpisodeState,
)
from fakegang.tools.env_client import EnvError, reset_options
from fakegang.tools.learning import insights
from fakegang.tools.learning.alpha import arbitrate_mode
from fakegang.tools.learning.credit import ALPHA_TRUSTED, exploration_weight, should_ask
from fakegang.tools.memory.store import utc_now
from fakegang.tools.models import llm as llm_calls
from fakegang.tools.models import prompting
from fakegang.tools.rules.actions import parse_action, parse_step
from fakegang.tools.rules.engine import propose, score_observation
from fakegang.tools.rules.pivots import shipped_yields
from fakegang_env.tasks import get_task

#: Free actions (flag/unflag) cost no budget, so cap the actions of an episode to stop a
#: flag/unflag loop; past the cap the agent submits.
ACTIONS_PER_STEP_BUDGET = 3
VIEW_TOP = 5


def thread_id_of(config: RunnableConfig) -> str:
    return str(config["configurable"]["thread_id"])


def _scores(state: EpisodeState, ctx: Context, thread_id: str):
    """Evidence scores of the current observation, computed once per step (observe, rule_check
    and llm_decide all need them). Scoring runs outside the lock; it is a pure function."""
    hit = resources.STEP_CACHE.get(thread_id, state["action_count"], "scores")
    if hit is not None:
        return hit
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    weights = learning.episode_weights(ctx, state["task"], state.get("weights_version"))
    scores = score_observation(obs, state["starting_ids"], weights, _yields(state))
    resources.STEP_CACHE.put(thread_id, state["action_count"], "scores", scores)
    return scores


def _yields(state: EpisodeState) -> dict[str, float]:
    """The trace yields the episode pinned (an episode checkpointed before pivots existed: the
    shipped ones)."""
    return state.get("trace_yields") or shipped_yields(state["task"])


# ---------------------------------------------------------------------------------------- observe
def observe(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """Start the episode on first entry; then index the latest observation into evidence."""
    ctx = runtime.context
    thread_id = thread_id_of(config)
    update: dict[str, Any] = {}
    if not state.get("env_episode_id"):
        update = _start_episode(state, ctx, thread_id)
        state = {**state, **update}  # type: ignore[assignment]
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    likelihood, frontier = _scores(state, ctx, thread_id)
    top_inspected = sorted(likelihood.items(), key=lambda kv: -kv[1])[:VIEW_TOP]
    top_frontier = sorted(frontier.items(), key=lambda kv: -kv[1])[:VIEW_TOP]
    update["view"] = {
        "step_count": obs.step_count,
        "steps_remaining": obs.steps_remaining,
        "visible": len(obs.visible_account_ids),
        "inspected": len(obs.inspected_ids),
        "flagged": len(obs.flagged_ids),
        "suspects": len(obs.suspect_ids),
        "evasion_count": obs.evasion_count,
        "top_inspected": [[a, round(p, 3)] for a, p in top_inspected],
        "top_frontier": [[a, round(q, 3)] for a, q in top_frontier],
    }
    return update


def _start_episode(state: EpisodeState, ctx: Context, thread_id: str) -> dict:
    """Reset the environment (episode id = thread id, so a re-run resets the same episode)."""
    task = get_task(state["task"])
    memory = resources.memory(ctx)
    obs = resources.env_client(ctx).reset(
        state["task"], state.get("seed"), episode_id=thread_id, **reset_options(state)
    )
    resources.store_observation(ctx, thread_id, obs)
    pinned = learning.pinned_at_start(ctx, memory, task.name)
    with memory.locked():
        learned = [i.text for i in insights.active(memory, task.name)] if ctx.learn else []
    lessons = memory.reflections(task.name, n=ctx.k_reflections)
    best = memory.best_trajectory(task.name)
    memory.upsert_episode(
        {
            "thread_id": thread_id,
            "run_id": state.get("run_id", ""),
            "episode": state.get("episode", 0),
            "task": task.name,
            "seed": obs.seed,
            "status": "running",
            "started_at": utc_now(),
            "kind": ctx.run_kind,
            "learns": int(ctx.learn),
        }
    )
    return {
        "thread_id": thread_id,
        "seed": obs.seed,  # a campaign round's seed is derived by the environment
        "env_episode_id": obs.episode_id or thread_id,
        "starting_ids": list(obs.visible_account_ids),
        "max_steps": task.max_steps,
        "max_actions": task.max_steps * ACTIONS_PER_STEP_BUDGET,
        **pinned,  # weights_version, trace_yields, alpha, llm_gain, explore_rate, ..., llm_stake
        "insights": learned,
        "lesson_ids": [r.id for r in lessons],
        "few_shot_thread": best.thread_id if best else None,
        "action_count": obs.action_count,
        "step_count": obs.step_count,
        "steps_remaining": obs.steps_remaining,
        "done": obs.done,
        "tally": dict.fromkeys(TALLY_KEYS, 0),
    }


# ------------------------------------------------------------------------------------- rule_check
def rule_check(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """The deterministic rule engine's proposal with a calibrated confidence."""
    ctx = runtime.context
    thread_id = thread_id_of(config)
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    proposal = propose(
        obs,
        state["starting_ids"],
        _scores(state, ctx, thread_id),
        llm_verdicts=state.get("llm_verdicts") or {},
        unflagged=state.get("unflagged_ids") or (),
        pivot_yields=_yields(state),
        wide_menu=state["alpha"] >= ALPHA_TRUSTED,
    )
    return {
        "rule": {
            "action": proposal.action,
            "confidence": proposal.confidence,
            "reason": proposal.reason,
        },
        "choices": proposal.choices,
    }


# ------------------------------------------------------------------------------------- llm_decide
def llm_decide(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """Ask the chat model only while it can pay: the rule is unsure (confidence below α), the
    LLM's credit says its answers beat the rule's and its stake for the episode is not spent; or
    as a shadow (judged, not acted on) on the small exploration share of steps, weighted toward
    the steps before the first flag and stopped once the LLM proposed to submit
    (`credit.exploration_weight`)."""
    ctx = runtime.context
    rule = state["rule"]
    thread_id = thread_id_of(config)
    stake = state.get("llm_stake")
    tally = state.get("tally", {})
    said_submit = tally.get(LLM_SUBMITS, 0) > 0
    ask, shadow, why = should_ask(
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
        None if stake is None else stake - tally.get(TRUSTED_CALLS, 0),
    )
    if not ask:
        if said_submit:
            why += "; no exploration after the LLM proposed to submit"
        return {"llm": {"status": "skipped", "reason": why}}
    if state.get("llm_off"):  # it timed out earlier: the rules decide the rest of the episode
        return {"llm": {"status": "skipped", "reason": state["llm_off"]}}
    memory = resources.memory(ctx)
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    likelihood, frontier = _scores(state, ctx, thread_id)
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
    return {
        **update,
        "llm": {
            "status": "ok" if result.ok else "error",
            "shadow": shadow,
            "action": result.value if result.ok else None,
            "reason": result.reason[:200],
            "error": result.error,
            "error_class": result.error_class,
            "latency_s": round(result.latency_s, 3),
            "tokens": result.tokens_in + result.tokens_out,
            "prompt_tokens": result.tokens_in,
            "prompt_tokens_reused": result.prompt_tokens_reused,
        },
    }


# -------------------------------------------------------------------------------------- arbitrate
def arbitrate(state: EpisodeState) -> dict:
    """Pick the action: `agree`, `rule_override` (rule confident or LLM unusable) or `llm`.

    A flag or unflag the LLM decided goes into `llm_verdicts`, which the rule does not reverse
    by itself (tools/rules/engine.py `propose`); the LLM's next decision on that account replaces
    it."""
    rule = state["rule"]
    llm = state.get("llm", {})
    llm_action = llm.get("action") if llm.get("status") == "ok" else None
    if llm_action is not None and llm_action not in state["choices"]:
        llm_action = None  # never act on something outside the legal menu
    mode = arbitrate_mode(rule["action"], rule["confidence"], llm_action, state["alpha"])
    if mode == "llm" and llm.get("shadow"):
        mode = "rule_override"  # an exploration call is judged after the debrief, never acted on
    action = llm_action if mode == "llm" else rule["action"]
    flips = state.get("llm_flips") or {}
    if mode == "llm" and _cycling(action, flips):
        action, mode = rule["action"], "rule_override"
    if state["action_count"] >= state["max_actions"]:
        action, mode = "submit", "rule_override"
    update: dict[str, Any] = {}
    kind, account = parse_action(action)
    if mode == "llm" and kind in ("flag", "unflag") and account:
        update["llm_verdicts"] = {**(state.get("llm_verdicts") or {}), account: kind}
        update["llm_flips"] = {**flips, account: flips.get(account, 0) + 1}
    unflagged = state.get("unflagged_ids") or []
    if kind == "unflag" and account and account not in unflagged:
        update["unflagged_ids"] = [*unflagged, account]
    tally = {mode: 1}  # increments: the state's reducer (add_counts) adds them up
    if llm.get("status") in ("ok", "error"):
        tally["llm_calls"] = 1
        tally["llm_tokens"] = int(llm.get("tokens") or 0)
        if not llm.get("shadow"):
            tally[TRUSTED_CALLS] = 1
        if llm.get("action") == "submit":
            tally[LLM_SUBMITS] = 1
    if llm.get("status") == "error":
        tally["llm_errors"] = 1
    return {
        **update,
        "decision": {"index": state["action_count"], "action": action, "mode": mode},
        "tally": tally,
    }


#: The LLM may flag or unflag one account this many times per episode (a mistake and its fix).
LLM_FLIPS_PER_ACCOUNT = 2


def _cycling(action: str, flips: dict[str, int]) -> bool:
    """An LLM flag or unflag of an account it already flipped LLM_FLIPS_PER_ACCOUNT times this
    episode: a free flag/unflag cycle, so the rule plays instead. A trusted model deciding every
    step looped (measured with `expert:0.9` on hard `mixed` once its credit made it trusted: the
    same case text drew the same random unflag after each oracle re-flag, until the action cap)."""
    kind, account = parse_action(action)
    return kind in ("flag", "unflag") and flips.get(account or "", 0) >= LLM_FLIPS_PER_ACCOUNT


# --------------------------------------------------------------------------------------- step_env
def step_env(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """Send the pending action with its index; a re-run after a crash gets the stored answer.

    An episode the server no longer holds is rebuilt first (graph/recovery.py).
    """
    ctx = runtime.context
    thread_id = thread_id_of(config)
    decision = state["decision"]
    action_type, account_id, trace = parse_step(decision["action"])
    client = resources.env_client(ctx)
    try:
        obs = client.step(
            state["env_episode_id"], action_type, account_id, decision["index"], trace
        )
    except EnvError as exc:
        # 404: the server lost the episode (restart, or the embedded server died with a killed
        # run); 409: it holds a half-rebuilt copy. Rebuild from the steps table, then step.
        if exc.status not in (404, 409):
            raise
        rebuild_for_state(ctx, state, thread_id)
        obs = client.step(
            state["env_episode_id"], action_type, account_id, decision["index"], trace
        )
    resources.store_observation(ctx, thread_id, obs)
    rule, llm = state["rule"], state.get("llm", {})
    resources.memory(ctx).upsert_step(
        {
            "thread_id": thread_id,
            "idx": decision["index"],
            "action": decision["action"],
            "mode": decision["mode"],
            "rule_action": rule["action"],
            "rule_confidence": rule["confidence"],
            "rule_reason": rule["reason"],
            "llm_status": llm.get("status", "skipped"),
            "llm_action": llm.get("action"),
            "llm_reason": llm.get("reason"),
            "llm_error": llm.get("error"),
            "llm_error_class": llm.get("error_class"),
            "llm_latency_s": llm.get("latency_s"),
            "llm_tokens": llm.get("tokens"),
            "llm_prompt_tokens": llm.get("prompt_tokens"),
            "llm_prompt_tokens_reused": llm.get("prompt_tokens_reused"),
            "alpha": state["alpha"],
            "reward": obs.reward,
            "message": obs.message,
            "steps_remaining": obs.steps_remaining,
            "view": json.dumps(state.get("view"), separators=(",", ":")),  # observe's evidence
        }
    )
    update: dict[str, Any] = {"operator": obs.operator.model_dump()} if obs.operator else {}
    return {
        **update,
        "action_count": obs.action_count,
        "step_count": obs.step_count,
        "steps_remaining": obs.steps_remaining,
        "done": obs.done,
        "last": {
            "action": decision["action"],
            "message": obs.message,
            "reward": obs.reward,
            "error": obs.last_action_error,
        },
    }


def route_after_step(state: EpisodeState) -> str:
    return "reflect" if state.get("done") else "observe"
