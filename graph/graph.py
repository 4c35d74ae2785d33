"""Wiring of the episode graph (one thread per episode).

`graph` is compiled without a checkpointer, for LangGraph Studio (which injects its own, see
langgraph.json); `compile_with_sqlite(path)` is what the CLI and the Python API use.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from fakegang.graph.context import DEFAULT_DB_PATH, Context
from fakegang.graph.nodes import ACTIONS_PER_STEP_BUDGET, NODES, NodeSpec
from fakegang.graph.state import EpisodeInput, EpisodeOutput, EpisodeState


def build(nodes: tuple[NodeSpec, ...] = NODES, state: type = EpisodeState) -> StateGraph:
    """The graph of `nodes` in order: the first is the entry, each node flows into the next
    unless its spec declares a route, and the last ends the episode. `state`: EpisodeState or
    an extension of it declaring the keys a new node writes."""
    builder = StateGraph(
        state,
        input_schema=EpisodeInput,
        output_schema=EpisodeOutput,
        context_schema=Context,
    )
    for spec in nodes:
        builder.add_node(spec.name, spec.function)
    builder.add_edge(START, nodes[0].name)
    for spec, following in zip(nodes, (*nodes[1:], None), strict=True):
        if spec.route is not None:
            router, ends = spec.route
            builder.add_conditional_edges(spec.name, router, list(ends))
        else:
            builder.add_edge(spec.name, following.name if following else END)
    return builder


builder = build()
graph = builder.compile(name="fakegang_episode")


def _shape() -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]:
    """Node names, the per-action cycle and each node's predecessor, read from the builder so
    pausing, the CLI and the recursion limit follow any change of wiring."""
    names = tuple(builder.nodes)
    follows = {start: end for start, end in builder.edges if start != START}
    cycle = [names[0]]  # plain edges from the entry node up to the first conditional edge
    while follows.get(cycle[-1]) in names:
        cycle.append(follows[cycle[-1]])
    previous = {end: start for start, end in builder.edges if start in names and end in names}
    for source, branches in builder.branches.items():
        for branch in branches.values():
            previous.update({end: source for end in (branch.ends or {}).values()})
    return names, tuple(cycle), previous


#: Every node, in the order the registry lists them (the entry first); the nodes one action
#: runs; and the node that runs just before each one (the entry's is the loop back).
NODE_NAMES, ACTION_CYCLE, PREVIOUS_NODE = _shape()
NODES_PER_ACTION = len(ACTION_CYCLE)


def recursion_limit(max_steps: int, actions_per_step: int = ACTIONS_PER_STEP_BUDGET) -> int:
    """Supersteps an episode may take: every action runs the action cycle, plus start and
    reflect."""
    return max_steps * actions_per_step * NODES_PER_ACTION + 10


def sqlite_checkpointer(db_path: str | Path) -> SqliteSaver:
    Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db_path), check_same_thread=False, timeout=30)
    # WAL + synchronous=NORMAL: every commit survives a killed process (what resume needs);
    # only an OS crash or power loss could lose the last commits. Saves an fsync per checkpoint.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return SqliteSaver(conn)


def compile_with_sqlite(db_path: str | Path = DEFAULT_DB_PATH) -> CompiledStateGraph:
    """The episode graph with LangGraph's SQLite checkpointer on `db_path`.

    Invoke it with a UUID thread id per episode, `durability="sync"`, a `Context` and the
    recursion limit of the task, e.g.::

        app = compile_with_sqlite("checkpoints/fakegang.sqlite")
        cfg = {"configurable": {"thread_id": str(uuid.uuid4())},
               "recursion_limit": recursion_limit(30)}
        out = app.invoke({"task": "easy", "seed": 0}, cfg, context=Context(env_url=url),
                         durability="sync")
        out["result"]["won"], out["tally"]["llm_calls"]  # the EpisodeOutput keys

    Such an episode is recorded with kind `api` and only reads the memory; pass
    `Context(..., learn=True)` for it to learn like a training episode (docs/run-kinds.md).
    """
    return builder.compile(checkpointer=sqlite_checkpointer(db_path), name="fakegang_episode")
