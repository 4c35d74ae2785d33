"""`reflect`, the last node: its spec (the node itself lives in graph/reflection.py)."""

from __future__ import annotations

from typing import Any

from fakegang.graph.nodes.spec import NodeSpec
from fakegang.graph.reflection import reflect


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    res = values.get("result", {})
    return (
        f"{'WIN' if res.get('won') else 'LOSS'} reward {res.get('reward', 0):+.2f} "
        f"grader {res.get('grader_score') or 0:.3f} steps {res.get('steps_used')} "
        f"recall {res.get('recall') or 0:.2f} precision {res.get('precision') or 0:.2f}"
        f" · learn: {res.get('learn_status')}"
    )


SPEC = NodeSpec(
    name="reflect",
    function=reflect,
    writes=("result",),
    summary=summary,
    panel="the debrief",
    ends_episode=True,
)
