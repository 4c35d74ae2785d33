"""What each node of an episode produced, read from LangGraph's checkpoints without writing.

The head branch is walked exactly as `fakegang replay` walks it (fakegang/runs/replay.py:
`head_branch`, `node_records`, `group_by_action`), through the real graph compiled on a
`SqliteSaver` whose connection is read-only. `setup()` is skipped (it would create tables and
switch the journal mode, both writes): a database without checkpoint tables has no history.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from fakegang.runs.replay import group_by_action, head_branch, node_records
from fakegang.view.db import read_only, table_names

#: The state keys each node writes, shown in the step panel under the node's name.
NODE_KEYS: dict[str, tuple[str, ...]] = {
    "observe": ("view",),
    "rule_check": ("rule", "choices"),
    "llm_decide": ("llm",),
    "arbitrate": ("decision", "alpha"),
    "fork": ("decision", "alpha"),
    "step_env": ("last", "done", "step_count", "steps_remaining"),
}


def _compiled(conn: sqlite3.Connection):
    from fakegang.graph.graph import builder

    saver = SqliteSaver(conn)
    saver.is_setup = True  # never CREATE TABLE / PRAGMA journal_mode on a read-only file
    return builder.compile(checkpointer=saver)


def read_history(path: Path, thread_id: str) -> dict[str, Any]:
    """{final: the head state, steps: per action the nodes' outputs, end: reflect's result,
    checkpoints: count on the head branch, total: count in the thread}."""
    with read_only(path) as conn:
        if "checkpoints" not in table_names(conn):
            return {"final": {}, "steps": [], "end": None, "checkpoints": 0, "total": 0}
        chain, total = head_branch(_compiled(conn), thread_id)
    if not chain:
        return {"final": {}, "steps": [], "end": None, "checkpoints": 0, "total": 0}
    steps: list[dict[str, Any]] = []
    end = None
    for group in group_by_action(node_records(chain)):
        if group[0].node == "reflect":
            end = {"result": group[0].values.get("result") or {}}
            continue
        nodes: dict[str, dict[str, Any]] = {}
        for rec in group:
            nodes[rec.node] = {k: rec.values.get(k) for k in NODE_KEYS.get(rec.node, ())}
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
    return {
        "final": chain[-1].values,
        "steps": steps,
        "end": end,
        "checkpoints": len(chain),
        "total": total,
    }
