"""What each node of an episode produced, read from LangGraph's checkpoints without writing.

The head branch is walked as `fakegang replay` walks it (fakegang/runs/replay.py): from the
newest checkpoint through its parents, each checkpoint credited to the node that ran between
its parent and it, then grouped per action (`group_by_action`). The saver is LangGraph's own
`SqliteSaver` on a read-only connection, with `setup()` skipped (it would create tables and
switch the journal mode, both writes): a database without checkpoint tables has no history.

Speed: `get_state_history` (what replay uses) unpacks every checkpoint's whole state and
rebuilds its next tasks, seconds on a long episode (docs/design-decisions.md, "Graph nodes
declare themselves"). The page only
needs what each node returned, which LangGraph keeps as that node's writes, attached to the
checkpoint it ran from; so the branch is walked on the checkpoints' ids alone
(fakegang/runs/checkpoint_tables.py), and only the writes, small, are unpacked with the saver's
own serializer, the state being rebuilt by applying them in order. The node that runs from a
checkpoint is the one its parent's writes trigger (`branch:to:<node>`, LangGraph 1.x's edge
channels); a checkpoint written by `update_state` (a fork) has no writes before it, so its own
state is read whole. Should the layout differ (no trigger where one is due), the public
`get_state_history` path is used instead. tests/view compares the page with that path.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from fakegang.graph.nodes import FORK, spec_of
from fakegang.runs.checkpoint_tables import thread_checkpoints, thread_writes
from fakegang.runs.replay import NodeRecord, group_by_action, head_branch, node_records
from fakegang.view.db import read_only, table_names

TRIGGER = "branch:to:"


def _saver(conn: sqlite3.Connection) -> SqliteSaver:
    saver = SqliteSaver(conn)
    saver.is_setup = True  # never CREATE TABLE / PRAGMA journal_mode on a read-only file
    return saver


def _compiled(conn: sqlite3.Connection):
    from fakegang.graph.graph import builder

    return builder.compile(checkpointer=_saver(conn))


def _state_at(saver: SqliteSaver, thread_id: str, checkpoint_id: str) -> tuple[dict, str | None]:
    """One checkpoint's state, read whole, and the node it triggers next."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    config["configurable"]["checkpoint_id"] = checkpoint_id
    found = saver.get_tuple(config)
    values = found.checkpoint["channel_values"] if found else {}
    trigger = next((k[len(TRIGGER) :] for k in values if k.startswith(TRIGGER)), None)
    return {k: v for k, v in values.items() if not k.startswith(("branch:", "__"))}, trigger


def _apply(saver: SqliteSaver, state: dict[str, Any], produced: list) -> str | None:
    """Apply one node's writes to `state` (the tally adds up, as its reducer does); the node
    they trigger next."""
    trigger = None
    for channel, typed in produced:
        if channel.startswith(TRIGGER):
            trigger = channel[len(TRIGGER) :]
        elif channel == "tally":
            merged = dict(state.get("tally") or {})
            for key, n in saver.serde.loads_typed(typed).items():
                merged[key] = merged.get(key, 0) + n
            state["tally"] = merged
        elif not channel.startswith("__"):
            state[channel] = saver.serde.loads_typed(typed)
    return trigger


def records_from_writes(
    conn: sqlite3.Connection, thread_id: str
) -> tuple[list[NodeRecord], dict[str, Any], int, int] | None:
    """(node records, head values, head-branch length, thread size) from the nodes' writes;
    None when the writes do not say which node ran (another LangGraph layout)."""
    rows = thread_checkpoints(conn, thread_id)
    if not rows:
        return [], {}, 0, 0
    parent_of = {cid: parent for cid, parent, _ in rows}
    source = {cid: json.loads(m or "{}").get("source") for cid, _, m in rows}
    chain = []
    cid: str | None = rows[0][0]
    while cid is not None and cid in parent_of:
        chain.append(cid)
        cid = parent_of[cid]
    chain.reverse()
    saver = _saver(conn)
    writes: dict[str, list] = {}
    for checkpoint_id, channel, kind, value in thread_writes(conn, thread_id):
        writes.setdefault(checkpoint_id, []).append((channel, (kind, value)))
    head, _ = _state_at(saver, thread_id, chain[-1])
    state: dict[str, Any] = {}
    records: list[NodeRecord] = []
    trigger: str | None = None
    for i, cid in enumerate(chain[:-1]):
        if source[cid] == "update":  # a fork: its state was set whole, not by a node
            before = state
            state, trigger = _state_at(saver, thread_id, cid)
            records.append(NodeRecord(FORK.name, dict(state), before, cid, None))
        nxt = chain[i + 1]
        if source[nxt] == "update":
            continue  # nothing ran from here: the fork follows
        node = "__start__" if source[cid] == "input" else trigger
        if node is None:
            return None
        before = dict(state)
        trigger = _apply(saver, state, writes.get(cid, []))
        if node != "__start__":
            records.append(NodeRecord(node, dict(state), before, nxt, None))
    if source[chain[-1]] == "update":
        records.append(NodeRecord(FORK.name, dict(head), state, chain[-1], None))
    return records, head, len(chain), len(rows)


def read_history(path: Path, thread_id: str) -> dict[str, Any]:
    """{final: the head state, steps: per action the nodes' outputs, end: reflect's result,
    checkpoints: count on the head branch, total: count in the thread}."""
    with read_only(path) as conn:
        if "checkpoints" not in table_names(conn):
            return {"final": {}, "steps": [], "end": None, "checkpoints": 0, "total": 0}
        fast = records_from_writes(conn, thread_id)
        if fast is None:
            chain, total = head_branch(_compiled(conn), thread_id)
            fast = (node_records(chain), chain[-1].values if chain else {}, len(chain), total)
    records, final, length, total = fast
    if not length:
        return {"final": {}, "steps": [], "end": None, "checkpoints": 0, "total": 0}
    steps: list[dict[str, Any]] = []
    end = None
    for group in group_by_action(records):
        if spec_of(group[0].node).ends_episode:
            end = {"result": group[0].values.get("result") or {}}
            continue
        nodes: dict[str, dict[str, Any]] = {}
        for rec in group:  # each node's declared outputs; an unknown node's: what it changed
            nodes[rec.node] = spec_of(rec.node, rec.values, rec.parent_values).outputs(rec.values)
        first = group[0].values
        steps.append(
            {
                "nodes": nodes,
                "action_count": first.get("action_count"),
                "step_count": first.get("step_count"),
                "max_steps": first.get("max_steps"),
                "checkpoint_id": group[-1].checkpoint_id,
                "created_at": group[-1].created_at,
            }
        )
    return {"final": final, "steps": steps, "end": end, "checkpoints": length, "total": total}
