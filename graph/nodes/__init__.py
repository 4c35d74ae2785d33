"""The nodes of the episode graph, one module each, and the registry everything iterates.

start → observe → rule_check → llm_decide → arbitrate → step_env → (observe | reflect).

`SPECS` lists, in the order they run, every step replay and the viewer show: the graph's nodes
(`NODES`, which graph/graph.py wires) plus the episode start (run inside `observe`'s first entry)
and a fork (a checkpoint `fakegang fork` wrote). A node added here is wired, replayed, shown in
the viewer (a generic panel until episode.js has a renderer of its name) and offered to
`--pause-before`; docs/how-to/extend-node.md is the recipe.

Every node may run twice: LangGraph re-runs a node that was interrupted by a crash from its first
line. Side effects are therefore idempotent: the environment step carries its action index (the
server answers a repeat instead of applying it), and memory writes are upserts keyed by thread id
and step index.
"""

from __future__ import annotations

from typing import Any

from fakegang.graph.nodes import arbitrate as _arbitrate
from fakegang.graph.nodes import fork as _fork
from fakegang.graph.nodes import llm_decide as _llm_decide
from fakegang.graph.nodes import observe as _observe
from fakegang.graph.nodes import reflect as _reflect
from fakegang.graph.nodes import rule_check as _rule_check
from fakegang.graph.nodes import start as _start
from fakegang.graph.nodes import step_env as _step_env
from fakegang.graph.nodes.arbitrate import LLM_FLIPS_PER_ACCOUNT, arbitrate, decision_source
from fakegang.graph.nodes.common import ACTIONS_PER_STEP_BUDGET, thread_id_of
from fakegang.graph.nodes.llm_decide import llm_decide
from fakegang.graph.nodes.observe import VIEW_TOP, observe
from fakegang.graph.nodes.rule_check import rule_check
from fakegang.graph.nodes.spec import NodeSpec, unknown_spec
from fakegang.graph.nodes.start import start_episode
from fakegang.graph.nodes.step_env import route_after_step, step_env
from fakegang.graph.state import StepRow

__all__ = [
    "ACTIONS_PER_STEP_BUDGET",
    "APPLIES",
    "DECIDES",
    "FORK",
    "LLM_FLIPS_PER_ACCOUNT",
    "NODES",
    "SPECS",
    "START",
    "VIEW_TOP",
    "NodeSpec",
    "arbitrate",
    "decision_source",
    "from_step_row",
    "llm_decide",
    "observe",
    "route_after_step",
    "rule_check",
    "spec_of",
    "start_episode",
    "step_env",
    "step_row",
    "thread_id_of",
]

#: Every step replay and the viewer show, in the order they run.
SPECS: tuple[NodeSpec, ...] = (
    _start.SPEC,
    _observe.SPEC,
    _rule_check.SPEC,
    _llm_decide.SPEC,
    _arbitrate.SPEC,
    _fork.SPEC,
    _step_env.SPEC,
    _reflect.SPEC,
)
#: The graph's nodes, in the order graph/graph.py wires them (the first is the entry).
NODES: tuple[NodeSpec, ...] = tuple(s for s in SPECS if s.in_graph)
#: The episode start's spec (shown before action #0's observe) and a fork's.
START = _start.SPEC
FORK = _fork.SPEC
#: The graph node that sends the decision to the environment, and the one that writes it (a fork
#: replaces the decision as that node, just before the action is applied).
APPLIES = next(s for s in NODES if s.applies_action)
DECIDES = next(s for s in NODES if "decision" in s.writes)

_BY_NAME = {s.name: s for s in SPECS}


def spec_of(
    name: str, values: dict[str, Any] | None = None, parent_values: dict[str, Any] | None = None
) -> NodeSpec:
    """The spec of `name`; for a node no spec declares, one built from what it changed."""
    return _BY_NAME.get(name) or unknown_spec(name, values or {}, parent_values or {})


def step_row(state: dict[str, Any], thread_id: str) -> StepRow:
    """The `steps` row of the action just applied: each spec's columns, from the state."""
    row: dict[str, Any] = {"thread_id": thread_id, "idx": state["decision"]["index"]}
    for spec in SPECS:
        if spec.step_row is not None:
            row |= spec.step_row(state)
    return row  # type: ignore[return-value]


def from_step_row(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per node, its outputs rebuilt from a `steps` row (the nodes the row holds nothing of are
    left out)."""
    nodes: dict[str, dict[str, Any]] = {}
    for spec in SPECS:
        outputs = spec.from_row(row) if spec.from_row is not None else None
        if outputs is not None:
            nodes[spec.name] = outputs
    return nodes
