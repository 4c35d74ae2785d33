"""One episode for the step view: per action what each node produced, the case picture's data
and the debrief, as one JSON-ready dict the page steps through without further requests.

Node outputs come from the checkpoints (fakegang/view/checkpoints.py). An episode whose history
was not kept (`fakegang prune`, or a campaign round, which checkpoints only at exit) falls back
to the `steps` table, which holds the rule's proposal, the LLM's answer, the arbitration, α,
the environment's reply and observe's evidence (its `view` column; a database written before
that column has no observe panel there), each node spec rebuilding its own outputs from the row
(graph/nodes/); the page says which source it shows. `panels` tells the page which panel to
draw for each node: a node episode.js has no renderer for gets the generic one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakegang.graph.nodes import FORK, SPECS, from_step_row, spec_of
from fakegang.tools.rules.engine import load_weights
from fakegang.view import db
from fakegang.view.case import replay_case, start_episode
from fakegang.view.checkpoints import read_history
from fakegang.view.explain import Explainer
from fakegang.view.memories import side_file, weights_version

#: What the page says about where the node outputs come from.
SOURCES = {
    "checkpoints": "the checkpoints",
    "steps": "the steps table: this episode's checkpoint history was not kept",
}


def _from_steps_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per action the node outputs the `steps` table recorded (each spec rebuilds its own)."""
    return [
        {
            "nodes": from_step_row(r),
            "action_count": r["idx"],
            "step_count": None,
            "max_steps": None,
        }
        for r in rows
    ]


def _decision_of(step: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The node that decided the step's action and its decision (a fork's over arbitrate's)."""
    found = None
    for name, outputs in step["nodes"].items():
        decision = (outputs or {}).get("decision")
        if decision and (found is None or name == FORK.name):
            found = (name, decision)
    return found


def _action_of(step: dict[str, Any]) -> str | None:
    found = _decision_of(step)
    return found[1].get("action") if found else None


def _mode_of(step: dict[str, Any]) -> str | None:
    """Who decided the step's action: agree, rule_override, rule_alone, llm or fork."""
    found = _decision_of(step)
    if found is None:
        return None
    return FORK.name if found[0] == FORK.name else found[1].get("mode")


def node_panels(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The panels the page draws, in the order the nodes ran: each node seen in the steps, with
    its tag line, what it writes and its renderer (`generic` when episode.js has none)."""
    order: list[str] = []
    written: dict[str, list[str]] = {}
    for step in steps:
        previous = None
        for name, outputs in step["nodes"].items():
            if name not in order:  # right after the node it followed
                order.insert(order.index(previous) + 1 if previous else 0, name)
                written[name] = list(outputs or {})
            previous = name
    known = {spec.name for spec in SPECS}
    panels = []
    for name in order:
        spec = spec_of(name) if name in known else None
        panels.append(
            {
                "name": name,
                "tag": spec.panel if spec else "a node without a spec",
                "writes": list(spec.writes) if spec else written[name],
                "renderer": name if spec and spec.custom_panel else "generic",
            }
        )
    return panels


def _reply_of(step: dict[str, Any]) -> str | None:
    """The environment's reply to the step's action (what the node writing `last` kept)."""
    for outputs in step["nodes"].values():
        last = (outputs or {}).get("last")
        if last:
            return last.get("message")
    return None


def load_episode(path: Path, thread_id: str) -> dict[str, Any]:
    """Everything the step view shows for `thread_id`."""
    with db.read_only(path) as conn:
        ep = db.episode(conn, thread_id)
        step_rows = db.steps(conn, thread_id)
        run = db.rows(conn, "select * from runs where run_id = ?", [ep["run_id"]])
        prev_id, next_id = db.neighbours(conn, ep)
        names = db.table_names(conn)
        fork = (
            db.rows(conn, "select * from forks where thread_id = ?", [thread_id])
            if "forks" in names
            else []
        )
        reflection = (
            db.rows(conn, "select text from reflections where thread_id = ?", [thread_id])
            if "reflections" in names
            else []
        )
    history = read_history(path, thread_id)
    final = history["final"]
    steps = history["steps"]
    source = "checkpoints"
    if not steps and step_rows:
        steps = _from_steps_table(step_rows)
        source = "steps"
    settings = db.settings_of(run[0]) if run else {}
    tactics = final.get("tactics") or settings.get("tactics")
    campaign, round_ = final.get("campaign"), final.get("round")
    for step in steps:  # what the page and the case file read without knowing node names
        step["action"], step["decided_by"] = _action_of(step), _mode_of(step)
    actions = [s["action"] for s in steps if s["action"]]
    messages = [_reply_of(s) for s in steps]
    case = None
    case_error = None
    # a campaign's versions are numbered in its own memory: never look them up in the file's
    memories = [side_file(path, settings)] if settings.get("kind") == "campaign" else [path]
    weights, weights_source = weights_version(memories, ep["task"], final.get("weights_version"))
    try:
        played = (final.get("operator") or {}).get("playbook")
        episode = start_episode(ep["task"], ep["seed"], tactics, campaign, round_, played)
        explainer = Explainer(
            list(episode.network.starting_ids),
            weights or load_weights(),
            final.get("trace_yields"),
        )
        case = replay_case(episode, actions, messages, explainer)
    except (ValueError, KeyError) as exc:  # an unknown task/playbook from another release
        case_error = f"the case could not be rebuilt: {exc}"
    for w in ((case or {}).get("why") or {}).values():  # who decided each flag
        k = w.get("flagged")
        w["flagged_by"] = steps[k]["decided_by"] if k is not None and k < len(steps) else None
    result = (history["end"] or {}).get("result") or final.get("result")
    return {
        "episode": ep,
        "run": run[0] if run else None,
        "tactics": tactics or "classic",
        "campaign": campaign,
        "round": round_,
        "source": source,
        "source_note": SOURCES[source],
        "checkpoints": history["checkpoints"],
        "checkpoints_total": history["total"],
        "steps": steps,
        "panels": node_panels(steps),
        "result": result,
        "reflection": reflection[0]["text"] if reflection else None,
        "fork": fork[0] if fork else None,
        "case": case,
        "case_error": case_error,
        "weights_source": weights_source,
        "db": str(path),
        "prev": prev_id,
        "next": next_id,
    }
