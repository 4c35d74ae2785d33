"""One episode for the step view: per action what each node produced, the case picture's data
and the debrief, as one JSON-ready dict the page steps through without further requests.

Node outputs come from the checkpoints (fakegang/view/checkpoints.py). An episode whose history
was not kept (`fakegang prune`, or a campaign round, which checkpoints only at exit) falls back
to the `steps` table, which holds the rule's proposal, the LLM's answer, the arbitration, α,
the environment's reply and observe's evidence (its `view` column; a database written before
that column has no observe panel there); the page says which source it shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def _view_of(row: dict[str, Any]) -> dict[str, Any] | None:
    """Observe's evidence kept in the step row (None: a row written before it was kept)."""
    try:
        view = json.loads(row.get("view") or "null")
    except ValueError:
        return None
    return view if isinstance(view, dict) else None


def _from_steps_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per action the node outputs the `steps` table recorded."""
    out = []
    for r in rows:
        view = _view_of(r)
        out.append(
            {
                "nodes": {
                    **({"observe": {"view": view}} if view else {}),
                    "rule_check": {
                        "rule": {
                            "action": r["rule_action"],
                            "confidence": r["rule_confidence"],
                            "reason": r["rule_reason"],
                        }
                    },
                    "llm_decide": {
                        "llm": {
                            "status": r["llm_status"],
                            "action": r["llm_action"],
                            "reason": r["llm_reason"],
                            "error": r["llm_error"],
                            "latency_s": r["llm_latency_s"],
                            "tokens": r["llm_tokens"],
                        }
                    },
                    "arbitrate": {
                        "decision": {"index": r["idx"], "action": r["action"], "mode": r["mode"]},
                        "alpha": r["alpha"],
                    },
                    "step_env": {
                        "last": {
                            "action": r["action"],
                            "message": r["message"],
                            "reward": r["reward"],
                            "error": None,
                        },
                        "steps_remaining": r["steps_remaining"],
                    },
                },
                "action_count": r["idx"],
                "step_count": None,
                "max_steps": None,
            }
        )
    return out


def _action_of(step: dict[str, Any]) -> str | None:
    nodes = step["nodes"]
    for name in ("fork", "arbitrate"):
        decision = (nodes.get(name) or {}).get("decision")
        if decision:
            return decision.get("action")
    return None


def _mode_of(step: dict[str, Any]) -> str | None:
    """Who decided the step's action: agree, rule_override, llm or fork."""
    for name in ("fork", "arbitrate"):
        decision = (step["nodes"].get(name) or {}).get("decision")
        if decision:
            return "fork" if name == "fork" else decision.get("mode")
    return None


def _reply_of(step: dict[str, Any]) -> str | None:
    return ((step["nodes"].get("step_env") or {}).get("last") or {}).get("message")


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
    actions = [a for a in (_action_of(s) for s in steps) if a]
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
        w["flagged_by"] = _mode_of(steps[k]) if k is not None and k < len(steps) else None
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
