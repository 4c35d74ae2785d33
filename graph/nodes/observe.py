"""`observe`: index the latest observation into evidence (and start the episode first)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.nodes.common import scores, thread_id_of
from fakegang.graph.nodes.spec import NodeSpec
from fakegang.graph.nodes.start import has_started, start_episode
from fakegang.graph.state import EpisodeState, ViewRecord

#: Candidates kept per list in the view: enough to read a decision back, small per checkpoint.
VIEW_TOP = 5


def observe(state: EpisodeState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """Start the episode on first entry; then index the latest observation into evidence."""
    ctx = runtime.context
    thread_id = thread_id_of(config)
    update: dict[str, Any] = {}
    if not has_started(state):
        update = start_episode(state, ctx, thread_id)
        state = {**state, **update}  # type: ignore[assignment]
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    likelihood, frontier = scores(state, ctx, thread_id)
    top_inspected = sorted(likelihood.items(), key=lambda kv: -kv[1])[:VIEW_TOP]
    top_frontier = sorted(frontier.items(), key=lambda kv: -kv[1])[:VIEW_TOP]
    view: ViewRecord = {
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
    update["view"] = view
    return update


def _top(pairs: list[list[Any]], n: int = 3) -> str:
    return ", ".join(f"{a} {p:.2f}" for a, p in pairs[:n]) or "-"


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    v = values.get("view", {})
    return (
        f"saw {v.get('visible')} visible, {v.get('inspected')} inspected, "
        f"{v.get('flagged')} flagged, {v.get('suspects')} suspects, "
        f"{v.get('steps_remaining')} steps left; top {_top(v.get('top_inspected', []))}; "
        f"frontier {_top(v.get('top_frontier', []))}"
    )


def step_row(state: dict[str, Any]) -> dict[str, Any]:
    return {"view": json.dumps(state.get("view"), separators=(",", ":"))}


def from_row(row: dict[str, Any]) -> dict[str, Any] | None:
    """The view kept in the row (None: a row written before the `view` column existed)."""
    try:
        view = json.loads(row.get("view") or "null")
    except ValueError:
        return None
    return {"view": view} if isinstance(view, dict) else None


SPEC = NodeSpec(
    name="observe",
    function=observe,
    writes=("view",),
    summary=summary,
    panel="the evidence",
    step_fields=("view",),
    step_row=step_row,
    from_row=from_row,
    opens_action=True,
    custom_panel=True,
)
