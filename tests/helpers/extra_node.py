"""A throwaway node for the node recipe's tests (docs/how-to/extend-node.md): `audit`, between
arbitrate and step_env, writing a key of its own and declaring no summary and no renderer."""

from __future__ import annotations

import uuid
from pathlib import Path

from langgraph.graph import StateGraph

from fakegang.graph.context import Context
from fakegang.graph.graph import build, recursion_limit, sqlite_checkpointer
from fakegang.graph.nodes import NODES, NodeSpec
from fakegang.graph.state import EpisodeState


class AuditedState(EpisodeState, total=False):
    audit_note: str  # the throwaway node's output


def audit(state: AuditedState) -> dict:
    return {"audit_note": f"checked {state['decision']['action']}"}


AUDIT = NodeSpec(name="audit", function=audit, writes=("audit_note",))


def with_audit() -> tuple[NodeSpec, ...]:
    """The shipped nodes with `audit` just before step_env."""
    at = [s.name for s in NODES].index("step_env")
    return (*NODES[:at], AUDIT, *NODES[at:])


def play_audited(db: Path, env_url: str) -> tuple[StateGraph, str]:
    """One easy episode (`--model fake`) played by the graph with `audit`; (graph, thread id)."""
    graph = build(with_audit(), state=AuditedState)
    app = graph.compile(checkpointer=sqlite_checkpointer(db))
    thread_id = str(uuid.uuid4())
    cfg = {"configurable": {"thread_id": thread_id}, "recursion_limit": recursion_limit(30)}
    ctx = Context(env_url=env_url, db_path=str(db), model="fake")
    try:
        app.invoke({"task": "easy", "seed": 0, "run_id": "t", "episode": 1}, cfg, context=ctx,
                   durability="sync")  # fmt: skip
    finally:
        app.checkpointer.conn.close()
    return graph, thread_id
