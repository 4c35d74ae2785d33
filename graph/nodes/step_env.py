"""`step_env`: apply the decided action in the environment and record the step's row."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.nodes.common import thread_id_of
from fakegang.graph.nodes.spec import NodeSpec
from fakegang.graph.recovery import rebuild_for_state
from fakegang.graph.state import EpisodeState, LastRecord
from fakegang.tools.env_client import EnvError
from fakegang.tools.rules.actions import parse_step


def step_env(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """Send the pending action with its index; a re-run after a crash gets the stored answer.

    An episode the server no longer holds is rebuilt first (graph/recovery.py).
    """
    from fakegang.graph.nodes import step_row  # the registry imports this module

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
    last: LastRecord = {
        "action": decision["action"],
        "message": obs.message,
        "reward": obs.reward,
        "error": obs.last_action_error,
    }
    update: dict[str, Any] = {"operator": obs.operator.model_dump()} if obs.operator else {}
    update |= {
        "action_count": obs.action_count,
        "step_count": obs.step_count,
        "steps_remaining": obs.steps_remaining,
        "done": obs.done,
        "last": last,
    }
    resources.memory(ctx).upsert_step(step_row({**state, **update}, thread_id))
    return update


def route_after_step(state: EpisodeState) -> str:
    return "reflect" if state.get("done") else "observe"


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    last = values.get("last", {})
    err = f" [illegal: {last.get('error')}]" if last.get("error") else ""
    done = " · episode over" if values.get("done") else ""
    return f"reward {last.get('reward', 0):+.2f}{err}{done}: {last.get('message')}"


def _row(state: dict[str, Any]) -> dict[str, Any]:
    last = state["last"]
    return {
        "reward": last["reward"],
        "message": last["message"],
        "steps_remaining": state["steps_remaining"],
    }


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "last": {
            "action": row["action"],
            "message": row["message"],
            "reward": row["reward"],
            "error": None,
        },
        "steps_remaining": row["steps_remaining"],
    }


SPEC = NodeSpec(
    name="step_env",
    function=step_env,
    writes=("last", "done", "step_count", "steps_remaining"),
    summary=summary,
    panel="the environment's reply",
    step_fields=("reward", "message", "steps_remaining"),
    step_row=_row,
    from_row=from_row,
    route=(route_after_step, ("observe", "reflect")),
    applies_action=True,
    custom_panel=True,
)
