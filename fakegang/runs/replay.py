"""Playback of an episode from its checkpoints: what each node saw and decided, step by step.

This is *not* LangGraph's replay (`invoke(None, past_config)` re-executes the nodes, calling the
environment and the LLM again). Here we only read: the thread's head branch is walked through
`parent_config` from the newest checkpoint back to the first, then printed oldest first. The node
that produced a checkpoint is the `next` of its parent; its decision is read from the state it
wrote (view, rule, llm, decision, last, result). No node runs, no environment or LLM call.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from langgraph.graph import StateGraph
from langgraph.types import StateSnapshot

from fakegang.graph.graph import builder as episode_graph
from fakegang.graph.nodes import FORK, NODES, START, spec_of
from fakegang.graph.nodes.start import has_started
from fakegang.runs.records import RunRecords
from fakegang.tools.memory.read_only import read_only_checkpointer
from fakegang.tools.memory.store import Memory

NODE_WIDTH = 11


class ReplayError(LookupError):
    """Unknown database or thread."""


@dataclass(frozen=True)
class NodeRecord:
    """One node execution on the branch: the node and the state right after it ran."""

    node: str  # a graph node, or "fork" for a checkpoint written by `update_state`
    values: dict[str, Any]
    parent_values: dict[str, Any]
    checkpoint_id: str
    created_at: str | None


def head_branch(app, thread_id: str) -> tuple[list[StateSnapshot], int]:
    """The head branch oldest→newest, and the number of checkpoints in the whole thread."""
    history = list(app.get_state_history({"configurable": {"thread_id": thread_id}}))
    if not history:
        return [], 0
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in history}
    chain = []
    snap: StateSnapshot | None = history[0]  # newest first: the head
    while snap is not None:
        chain.append(snap)
        parent = snap.parent_config
        snap = by_id.get(parent["configurable"]["checkpoint_id"]) if parent else None
    chain.reverse()
    return chain, len(history)


def node_records(chain: list[StateSnapshot]) -> list[NodeRecord]:
    out = []
    for prev, cur in zip(chain, chain[1:], strict=False):
        if (cur.metadata or {}).get("source") == "update":
            node = FORK.name
        elif prev.next and not prev.next[0].startswith("__"):
            node = prev.next[0]
        else:
            continue
        out.append(
            NodeRecord(
                node,
                cur.values,
                prev.values,
                cur.config["configurable"]["checkpoint_id"],
                cur.created_at,
            )
        )
    return out


def describe(node: str, values: dict[str, Any], parent_values: dict[str, Any] | None = None) -> str:
    """One line: what `node` saw or decided, read from the state it wrote (a node without a
    spec of its own: the keys it changed)."""
    return spec_of(node, values, parent_values).describe(values, parent_values or {})


def with_episode_start(records: list[NodeRecord]) -> list[NodeRecord]:
    """The records with the episode start as its own entry, before the node that ran it (the
    first `observe`: the start is not a graph node, graph/nodes/start.py)."""
    out = []
    for rec in records:
        ran_it = spec_of(rec.node).in_graph
        if ran_it and has_started(rec.values) and not has_started(rec.parent_values):
            out.append(NodeRecord(START.name, *_fields(rec)))
        out.append(rec)
    return out


def _fields(rec: NodeRecord) -> tuple:
    return rec.values, rec.parent_values, rec.checkpoint_id, rec.created_at


def group_by_action(records: list[NodeRecord]) -> list[list[NodeRecord]]:
    """Split the node records into env actions (the start and observe … step_env) and the final
    reflect: a group opens at a spec that opens an action (unless the start just opened it) or
    ends the episode."""
    groups: list[list[NodeRecord]] = []
    for rec in with_episode_start(records):
        spec = spec_of(rec.node)
        opens = spec.opens_action or spec.ends_episode
        if not groups or (opens and groups[-1][-1].node != START.name):
            groups.append([])
        groups[-1].append(rec)
    return groups


def is_action(group: list[NodeRecord]) -> bool:
    """The group is one env action (not the debrief)."""
    return spec_of(group[0].node).opens_action


def group_title(group: list[NodeRecord]) -> str:
    first = group[0]
    if spec_of(first.node).ends_episode:
        return "── end of episode ──"
    decision = next(
        (r.values.get("decision") for r in reversed(group) if "decision" in spec_of(r.node).writes),
        None,
    )
    idx = decision["index"] if decision else first.values.get("action_count")
    v = first.values
    return (
        f"── action #{idx} · {v.get('step_count')}/{v.get('max_steps')} steps used "
        f"· α {v.get('alpha', 0):.2f} ──"
    )


def render_group(group: list[NodeRecord]) -> str:
    lines = [group_title(group)]
    for rec in group:
        lines.append(
            f"  {rec.node:<{NODE_WIDTH}} {describe(rec.node, rec.values, rec.parent_values)}"
        )
    return "\n".join(lines)


def _header(thread_id: str, chain: list[StateSnapshot], total: int, memory) -> list[str]:
    head = chain[-1]
    v = head.values
    row = memory.episode(thread_id) or {}
    lines = [
        f"Episode {thread_id}",
        f"  run {v.get('run_id') or row.get('run_id')} · episode {v.get('episode')} · task "
        f"{v.get('task')} · seed {v.get('seed')} · env episode {v.get('env_episode_id')}",
        f"  {len(chain)} checkpoint{'s' * (len(chain) != 1)} on the head branch "
        f"({total} in the thread)"
        + (f"; paused/interrupted before {', '.join(head.next)}" if head.next else "; finished"),
    ]
    fork = RunRecords(memory).fork_of(thread_id)
    if fork:
        lines.append(
            f"  fork of {fork['parent_thread_id']} at action #{fork['at_index']}: "
            f"{fork['action']} instead of {fork['original_action']}"
        )
    for child in RunRecords(memory).forks_of(thread_id):
        crow = memory.episode(child["thread_id"]) or {}
        outcome = (
            f"{'WIN' if crow.get('won') else 'LOSS'} reward {crow.get('reward', 0):+.2f}"
            if crow.get("status") == "finished"
            else crow.get("status", "?")
        )
        lines.append(
            f"  forked at action #{child['at_index']} ({child['action']}) → "
            f"{child['thread_id']}: {outcome}"
        )
    return lines


def isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def replay(
    db: str | Path,
    thread_id: str,
    *,
    step: bool = False,
    out: TextIO = sys.stdout,
    stdin: TextIO = sys.stdin,
    graph: StateGraph | None = None,
) -> int:
    """Print the episode from its checkpoints; with `step`, wait for Enter between actions.

    `graph`: the graph that wrote the episode, when not the episode graph. Returns the number of
    env actions printed.
    """

    if not Path(db).exists():
        raise ReplayError(f"no database at {db}")
    # replay only reads: no schema, WAL switch or -wal/-shm file (tools/memory/read_only.py)
    app = (graph or episode_graph).compile(
        checkpointer=read_only_checkpointer(db), name="fakegang_episode"
    )
    memory = Memory(db, file_read_only=True)
    try:
        chain, total = head_branch(app, thread_id)
        if not chain:
            raise ReplayError(
                f"no checkpoints for thread {thread_id} in {db} (`fakegang runs` lists episodes)"
            )
        for line in _header(thread_id, chain, total, memory):
            print(line, file=out)
        groups = group_by_action(node_records(chain))
        if not groups:
            print("  history pruned: only the final checkpoint is kept", file=out)
            final = chain[-1].values
            if final.get("last"):
                print(f"  last action {final['last'].get('action')}", file=out)
            for spec in NODES:  # what the final state still says of the last action's nodes
                if not spec.opens_action and all(key in final for key in spec.writes):
                    print(f"  {spec.name:<{NODE_WIDTH}} {spec.describe(final, {})}", file=out)
        actions = 0
        for i, group in enumerate(groups):
            print(render_group(group), file=out, flush=True)
            actions += is_action(group)
            if step and i < len(groups) - 1:
                print("[Enter] next action, q to stop: ", end="", file=out, flush=True)
                line = stdin.readline()
                if line and not isatty(stdin):
                    print(line.strip(), file=out)  # echo what a pipe answered
                if not line or line.strip().lower() in ("q", "quit"):
                    print("\nstopped", file=out)
                    break
        return actions
    finally:
        memory.close()
        app.checkpointer.conn.close()
