"""What a node of the episode graph declares about itself, so the graph, replay, the viewer, the
steps table and the CLI read one description instead of knowing nodes by name."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: A node's one-line summary of what it produced: (state after it ran, state before it ran).
Summary = Callable[[dict[str, Any], dict[str, Any]], str]
#: Rebuilds a node's outputs from a `steps` row (None: the row holds nothing of it).
FromRow = Callable[[dict[str, Any]], dict[str, Any] | None]
#: The `steps` columns a node fills, from the state once the action was applied.
RowColumns = Callable[[dict[str, Any]], dict[str, Any]]
#: A node's outputs under today's names: (what it wrote, the whole state after it ran).
Normalise = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
#: A conditional edge: the router and the nodes it may send the episode to.
Route = tuple[Callable[[Any], str], tuple[str, ...]]

GENERIC_VALUE_WIDTH = 80


@dataclass(frozen=True)
class NodeSpec:
    """One entry of the node registry (graph/nodes/__init__.py `SPECS`).

    `in_graph` is False for the steps replay and the viewer show that are not graph nodes: the
    episode start (run inside `observe`'s first entry, see start.py) and a fork (a checkpoint
    written by `update_state`). `panel` is the viewer panel's tag line; `custom_panel` says that
    fakegang/view/static/episode.js has a renderer of that name (otherwise a generic panel lists
    `writes`). `normalise` maps values older databases stored under other names.
    """

    name: str
    function: Callable[..., dict[str, Any]] | None
    writes: tuple[str, ...]
    summary: Summary | None = None
    panel: str = ""
    step_fields: tuple[str, ...] = ()
    step_row: RowColumns | None = None
    from_row: FromRow | None = None
    route: Route | None = None
    in_graph: bool = True
    opens_action: bool = False
    applies_action: bool = False  # sends the decision to the environment (counts the action)
    ends_episode: bool = False
    custom_panel: bool = False
    normalise: Normalise | None = None

    def describe(self, values: dict[str, Any], parent_values: dict[str, Any]) -> str:
        """The node's one line, or the generic one when it declares no summary."""
        if self.summary is None:
            return generic_summary(self.writes, values)
        return self.summary(values, parent_values)

    def outputs(self, values: dict[str, Any]) -> dict[str, Any]:
        """What the node wrote, as the viewer's step panel shows it (old names mapped)."""
        written = {key: values.get(key) for key in self.writes}
        return self.normalise(written, values) if self.normalise else written


def _short(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), default=str)
    return text if len(text) <= GENERIC_VALUE_WIDTH else text[: GENERIC_VALUE_WIDTH - 1] + "…"


def generic_summary(keys: tuple[str, ...], values: dict[str, Any]) -> str:
    """`key=value` for each written key: a node without its own summary still gets a line."""
    return "; ".join(f"{key}={_short(values.get(key))}" for key in keys) or "(wrote nothing)"


def changed_keys(values: dict[str, Any], parent_values: dict[str, Any]) -> tuple[str, ...]:
    """The state keys a node without a spec changed: what an unknown node is shown by."""
    return tuple(k for k, v in values.items() if parent_values.get(k) != v)


def unknown_spec(name: str, values: dict[str, Any], parent_values: dict[str, Any]) -> NodeSpec:
    """A spec for a node the registry does not know (a database another graph wrote)."""
    return NodeSpec(name, None, changed_keys(values, parent_values), panel="a node without a spec")
