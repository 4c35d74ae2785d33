"""`fork`: a checkpoint `fakegang fork` wrote with another action (`update_state`), shown by
replay and the viewer in the place of arbitrate's decision. Not a graph node."""

from __future__ import annotations

from typing import Any

from fakegang.graph.nodes.spec import NodeSpec


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    d = values.get("decision", {})
    was = (parent_values or {}).get("decision", {}).get("action")
    return f"FORK → {d.get('action')} (the original branch played {was})"


SPEC = NodeSpec(
    name="fork",
    function=None,
    writes=("decision", "alpha"),
    summary=summary,
    panel="a person changed the action",
    in_graph=False,
    custom_panel=True,
)
