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

from langgraph.types import StateSnapshot

from fakegang.graph.graph import builder
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
            node = "fork"
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


def _top(pairs: list[list[Any]], n: int = 3) -> str:
    return ", ".join(f"{a} {p:.2f}" for a, p in pairs[:n]) or "-"


def describe(node: str, values: dict[str, Any], parent_values: dict[str, Any] | None = None) -> str:
    """One line: what `node` saw or decided, read from the state it wrote."""
    if node == "observe":
        v = values.get("view", {})
        return (
            f"saw {v.get('visible')} visible, {v.get('inspected')} inspected, "
            f"{v.get('flagged')} flagged, {v.get('suspects')} suspects, "
            f"{v.get('steps_remaining')} steps left; top {_top(v.get('top_inspected', []))}; "
            f"frontier {_top(v.get('top_frontier', []))}"
        )
    if node == "rule_check":
        r = values.get("rule", {})
        return (
            f"proposes {r.get('action')} (confidence {r.get('confidence', 0):.2f}) "
            f"among {len(values.get('choices', []))} choices: {r.get('reason')}"
        )
    if node == "llm_decide":
        llm = values.get("llm", {})
        status = llm.get("status")
        if status == "skipped":
            return f"skipped: {llm.get('reason')}"
        if status == "ok":
            return (
                f"proposes {llm.get('action')} ({llm.get('latency_s')} s, "
                f"{llm.get('tokens')} tokens): {llm.get('reason')}"
            )
        return f"error: {llm.get('error')}"
    if node == "arbitrate":
        d = values.get("decision", {})
        return f"{d.get('mode')} → {d.get('action')} (α {values.get('alpha', 0):.2f})"
    if node == "fork":
        d = values.get("decision", {})
        was = (parent_values or {}).get("decision", {}).get("action")
        return f"FORK → {d.get('action')} (the original branch played {was})"
    if node == "step_env":
        last = values.get("last", {})
        err = f" [illegal: {last.get('error')}]" if last.get("error") else ""
        done = " · episode over" if values.get("done") else ""
        return f"reward {last.get('reward', 0):+.2f}{err}{done}: {last.get('message')}"
    if node == "reflect":
        res = values.get("result", {})
        return (
            f"{'WIN' if res.get('won') else 'LOSS'} reward {res.get('reward', 0):+.2f} "
            f"grader {res.get('grader_score') or 0:.3f} steps {res.get('steps_used')} "
            f"recall {res.get('recall') or 0:.2f} precision {res.get('precision') or 0:.2f}"
            f" · learn: {res.get('learn_status')}"
        )
    return ""


def group_by_action(records: list[NodeRecord]) -> list[list[NodeRecord]]:
    """Split the node records into env actions (observe … step_env) and the final reflect."""
    groups: list[list[NodeRecord]] = []
    for rec in records:
        if rec.node in ("observe", "reflect") or not groups:
            groups.append([])
        groups[-1].append(rec)
    return groups


def group_title(group: list[NodeRecord]) -> str:
    first = group[0]
    if first.node == "reflect":
        return "── end of episode ──"
    decision = next(
        (r.values.get("decision") for r in reversed(group) if r.node in ("arbitrate", "fork")),
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
) -> int:
    """Print the episode from its checkpoints; with `step`, wait for Enter between actions.

    Returns the number of env actions printed.
    """

    if not Path(db).exists():
        raise ReplayError(f"no database at {db}")
    # replay only reads: no schema, WAL switch or -wal/-shm file (tools/memory/read_only.py)
    app = builder.compile(checkpointer=read_only_checkpointer(db), name="fakegang_episode")
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
                print(f"  {'step_env':<{NODE_WIDTH}} {describe('step_env', final)}", file=out)
            if final.get("result"):
                print(f"  {'reflect':<{NODE_WIDTH}} {describe('reflect', final)}", file=out)
        actions = 0
        for i, group in enumerate(groups):
            print(render_group(group), file=out, flush=True)
            actions += group[0].node == "observe"
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
