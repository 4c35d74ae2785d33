"""The episode graph's last node, `reflect`: record the outcome, keep the best win, write a
lesson (the LLM's, or one built from the facts when it fails) and learn from the debrief.

Safe to re-run after a kill: every write is an upsert keyed by the thread id, and a lesson or a
trajectory already stored for this episode is reported as the first run reported it.
"""

from __future__ import annotations

import json
import re

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from fakegang.graph import learning, resources
from fakegang.graph.context import Context
from fakegang.graph.nodes.common import thread_id_of
from fakegang.graph.state import EpisodeState, tally_columns
from fakegang.tools.learning.alpha import MODE_COLUMNS
from fakegang.tools.memory.episode_row import RESULT_KEYS
from fakegang.tools.memory.store import Trajectory, utc_now
from fakegang.tools.models import llm as llm_calls
from fakegang.tools.models import prompting
from fakegang.tools.rules.actions import log_form
from fakegang_env.schema import PlainObservation
from fakegang_env.tasks import get_task

__all__ = ["FALLBACK_PREFIX", "reflect"]

FALLBACK_PREFIX = "[fallback lesson"


def reflect(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """Record the outcome, keep the best win, write a lesson, update α. Safe to re-run."""
    ctx = runtime.context
    thread_id = thread_id_of(config)
    memory = resources.memory(ctx)
    task = get_task(state["task"])
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    steps = memory.steps(thread_id) if ctx.learn or ctx.record else []
    action_log = [log_form(s["action"]) for s in steps]
    won = obs.message.startswith("[WIN]")
    reward = float(obs.episode_return)
    tally = state["tally"]
    row = {
        "thread_id": thread_id,
        "run_id": state.get("run_id", ""),
        "episode": state.get("episode", 0),
        "task": task.name,
        "seed": state["seed"],
        "status": "finished",
        "won": int(won),
        "reward": round(reward, 3),
        "grader_score": obs.grader_score,
        "steps_used": obs.step_count,
        "recall": obs.recall if obs.recall is not None else _extract(obs.message, "Recall="),
        "precision": (
            obs.precision if obs.precision is not None else _extract(obs.message, "Precision=")
        ),
        "final_message": obs.message,
        "action_log": json.dumps(action_log),
        "n_reflections_used": len(state.get("lesson_ids", [])),
        "had_few_shot": int(state.get("few_shot_thread") is not None),
        "alpha_used": state["alpha"],
        **tally_columns(tally),
        "finished_at": (memory.episode(thread_id) or {}).get("finished_at") or utc_now(),
        "operator": operator_json(obs),
    }
    memory.upsert_episode(row)
    learn_status = f"{ctx.run_kind}: memory read only, nothing learned"
    if ctx.learn:
        learn_status, call = _learn(
            ctx, state, row, action_log, won, reward, obs.grader_score or 0.0
        )
        learned = learning.learn_from_debrief(
            ctx, {**state, "thread_id": thread_id}, obs, steps, won=won
        )
        learn_status = "; ".join([learn_status, *learned])
        memory.upsert_episode({"thread_id": thread_id, "learn_status": learn_status, **call})
    result = {k: row[k] for k in RESULT_KEYS}
    result.update(final_message=obs.message, learn_status=learn_status)
    return {"result": result}


def _learn(
    ctx: Context,
    state: EpisodeState,
    row: dict,
    action_log: list[str],
    won: bool,
    reward: float,
    grader_score: float,
) -> str:
    """Keep the best win and write the lesson; returns the status and the reflection call's
    columns of the episode row (empty when no call was due, or a re-run found the lesson)."""
    memory = resources.memory(ctx)
    task = get_task(state["task"])
    thread_id = row["thread_id"]
    status = []
    call: dict[str, str | None] = {}
    write_reflection = not won
    if won:
        traj = Trajectory(
            task.name, thread_id, reward, grader_score, action_log, row["final_message"]
        )
        saved = memory.maybe_save_trajectory(traj)
        status.append("new best trajectory saved" if saved else "trajectory kept (not better)")
        existing = memory.reflection_for(thread_id)
        write_reflection = saved or memory.reflection_count(task.name) == 0 or existing is not None
    if write_reflection:
        kind = "success" if won else "failure"
        existing = memory.reflection_for(thread_id)
        if existing is not None:  # a re-run after a kill: report it as the first run did
            source = "fallback" if existing.text.startswith(FALLBACK_PREFIX) else "llm"
            status.append(f"{kind} reflection ({source}): stored")
            call = _recorded_call(memory.episode(thread_id) or {}, existing.text, source)
        else:
            text, source, call = _reflection_text(ctx, state, row, action_log, won)
            # the call's outcome goes on the episode row before the lesson is stored, so a kill
            # between the two never leaves a lesson whose call a re-run cannot report
            memory.upsert_episode({"thread_id": thread_id, **call})
            stored = memory.add_reflection(
                task=task.name, thread_id=thread_id, text=text, won=won, reward=reward
            )
            status.append(f"{kind} reflection ({source}): {stored}")
    return "; ".join(status), call


def _recorded_call(episode: dict, text: str, source: str) -> dict[str, str | None]:
    """The reflection call's columns as the first run recorded them on the episode row; for a
    row from before they were recorded first, derived from the stored lesson."""
    if episode.get("reflection_call"):
        return {
            k: episode.get(k)
            for k in ("reflection_call", "reflection_error", "reflection_error_class")
            if k in episode
        }
    if source == "llm":
        return {"reflection_call": "ok"}
    return {"reflection_call": "skipped" if "not asked" in text else "error"}


def _reflection_text(
    ctx: Context, state: EpisodeState, row: dict, action_log: list[str], won: bool
) -> tuple[str, str, dict[str, str | None]]:
    """The LLM's lesson, or a lesson built from the episode's facts if the LLM fails or timed
    out earlier in the episode (not asked: it would stall the run as long again); with the
    call's outcome as episode columns (reflection_call ok | error | skipped, its error)."""
    if state.get("llm_off"):
        error = "not asked, it timed out earlier in this episode"
        return _fallback(row, won, error), "fallback", {"reflection_call": "skipped"}
    system, user = prompting.reflection_messages(
        won=won,
        episode=row["episode"],
        task=row["task"],
        final_message=row["final_message"],
        steps_used=row["steps_used"],
        max_steps=state["max_steps"],
        action_log=action_log,
        modes={mode: row[column] for mode, column in MODE_COLUMNS.items()},
    )
    try:
        result = llm_calls.reflect(
            resources.chat_model(ctx),
            system=system,
            user=user,
            settings=ctx.model_settings(),
        )
        if result.ok and result.value and result.value.strip():
            return result.value.strip(), "llm", {"reflection_call": "ok"}
        error, error_class = result.error, result.error_class or "empty reflection"
    except Exception as exc:  # never let a reflection end the run
        error, error_class = str(exc), type(exc).__name__
    call = {
        "reflection_call": "error",
        "reflection_error": str(error)[:300],
        "reflection_error_class": error_class,
    }
    return _fallback(row, won, error), "fallback", call


def _fallback(row: dict, won: bool, error: str | None) -> str:
    """A lesson built from the episode's facts (what a failed reflection leaves)."""
    return (
        f"{FALLBACK_PREFIX}, LLM failed: {str(error)[:80]}] {row['final_message']} after "
        f"{row['steps_used']} steps; "
        + (
            "keep flagging only accounts with several agreeing signals and submit early."
            if won
            else "explore the follows of the likeliest member sooner and flag on combined evidence."
        )
    )


def operator_json(obs: PlainObservation) -> str | None:
    """An adaptive round's operator debrief as the episodes table keeps it (no next token)."""
    if obs.operator is None:
        return None
    return json.dumps(obs.operator.model_dump(exclude={"next_token"}), separators=(",", ":"))


def _extract(text: str, key: str) -> float:
    m = re.search(re.escape(key) + r"([0-9.]+)", text)
    return float(m.group(1)) if m else 0.0
