"""The learning page's data: per learned memory (the run database's own, and each campaign's side
file: fakegang/view/memories.py) what moved and when, and what it bought.

What moved is said outright, not left to a chart to show: per evidence family, how far its
strength (the report's `family_strengths`, as a share of the shipped weights) ever got from the
shipped one, and the refits that moved any family by at least MOVED; α and the trace yields the
same way. Long tables (every weight version, every credit row, every trace-yield row) sit in
collapsed `<details>`, so the page stays a few window heights tall after a 50-episode training.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from fakegang.view import db
from fakegang.view.db import rows, table_names
from fakegang.view.memories import MemoryFile, campaign_memories

#: A family share (or a yield, relatively) that changed by at least this much moved.
MOVED = 0.01
#: Rows of a long table kept in its collapsed listing.
TABLE_LIMIT = 200


def _episode_of(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    return {
        r["thread_id"]: r
        for r in rows(conn, "select thread_id, run_id, episode, task, won from episodes")
    }


def _weight_versions(conn: sqlite3.Connection, episodes: dict[str, dict]) -> list[dict[str, Any]]:
    from fakegang.report.learning import family_strengths
    from fakegang.tools.rules.engine import load_weights

    shipped = load_weights()
    base = family_strengths(shipped["profile"], shipped["frontier"])
    out = []
    for v in rows(conn, "select * from weight_versions order by version"):
        try:
            profile, frontier = json.loads(v["profile"] or "{}"), json.loads(v["frontier"] or "{}")
        except ValueError:
            profile, frontier = {}, {}
        strength = family_strengths(profile, frontier)
        ep = episodes.get(v["thread_id"]) or {}
        out.append(
            {
                "version": v["version"],
                "task": v["task"],
                "thread_id": v["thread_id"],
                "run_id": ep.get("run_id"),
                "episode": ep.get("episode"),
                "n_rows": v["n_rows"],
                "n_episodes": v["n_episodes"],
                "tactics": json.loads(v["tactics"]) if v.get("tactics") else None,
                "families": {f: round(s / base[f], 3) for f, s in strength.items() if base[f]},
                "created_at": v["created_at"],
            }
        )
    return out


def _learner(conn: sqlite3.Connection, episodes: dict[str, dict]) -> list[dict[str, Any]]:
    """Per weights version: whether it fitted a learner of the current operator, the traits'
    evidence it read (AUC per trait), its sentence, and whether that sentence changed from the
    version before of the same task (`changed`)."""
    out: list[dict[str, Any]] = []
    last: dict[str, str | None] = {}
    for r in rows(
        conn,
        "select version, task, thread_id, model is not null as fitted, learner "
        "from operator_models order by version",
    ):
        try:
            learner = json.loads(r["learner"] or "{}")
        except ValueError:
            learner = {}
        ep = episodes.get(r["thread_id"]) or {}
        insight = learner.get("insight")
        out.append(
            {
                "version": r["version"],
                "task": r["task"],
                "thread_id": r["thread_id"],
                "run_id": ep.get("run_id"),
                "episode": ep.get("episode"),
                "fitted": bool(r["fitted"]),
                "evidence": learner.get("evidence") or {},
                "insight": insight,
                "regime_episodes": learner.get("regime_episodes"),
                "changed": bool(insight) and insight != last.get(r["task"]),
            }
        )
        last[r["task"]] = insight
    return out


def _moves(versions: list[dict[str, Any]]) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """(per family the largest distance from the shipped weights; the refits that moved a family
    by at least MOVED from the version before, with what moved: [family, (before, after)],
    largest move first)."""
    farthest: dict[str, float] = {}
    changes = []
    before: dict[str, float] = {}
    for v in versions:
        moved = {}
        for f, share in v["families"].items():
            farthest[f] = max(farthest.get(f, 0.0), abs(share - 1.0))
            prev = before.get(f, 1.0)
            if abs(share - prev) >= MOVED:
                moved[f] = (prev, share)
        if moved:  # the largest moves first: the page names the first few
            ranked = sorted(moved.items(), key=lambda kv: -abs(kv[1][1] - kv[1][0]))
            changes.append({**v, "moved": ranked})
        before = v["families"]
    return farthest, changes


def _yields(conn: sqlite3.Connection, names: set[str]) -> tuple[list[dict], list[dict]]:
    """(per task and trace: episodes, pivots, first and last estimate; the latest rows)."""
    if "trace_yields" not in names:
        return [], []
    from fakegang.tools.rules.pivots import shipped_yields

    summary = rows(
        conn,
        "select task, trace, count(*) as episodes, sum(pivots) as pivots, "
        "min(created_at) as first_at, max(created_at) as last_at from trace_yields "
        "group by task, trace order by task, trace",
    )
    for s in summary:
        last = conn.execute(
            "select estimate from trace_yields where task = ? and trace = ? "
            "order by created_at desc, rowid desc limit 1",
            [s["task"], s["trace"]],
        ).fetchone()
        try:
            shipped = shipped_yields(s["task"]).get(s["trace"])
        except (KeyError, ValueError):
            shipped = None
        s["shipped"], s["estimate"] = shipped, last[0] if last else None
        s["moved"] = (
            shipped is not None
            and s["estimate"] is not None
            and abs(s["estimate"] - shipped) >= MOVED * max(1.0, abs(shipped))
        )
    latest = rows(
        conn,
        f"select * from trace_yields order by created_at desc, rowid desc limit {TABLE_LIMIT}",
    )
    return summary, latest


def _operator_moves(conn: sqlite3.Connection, run_id: str | None) -> list[dict[str, Any]]:
    """Per round of a campaign run: outcome, and the ring operator's move where the round's
    debrief (its final observation) names one (`operator`: playbook, survival, reason)."""
    if not run_id:
        return []
    out = []
    for e in rows(
        conn,
        "select e.thread_id, e.episode, e.won, e.grader_score, o.observation from episodes e "
        "left join observations o on o.thread_id = e.thread_id where e.run_id = ? "
        "order by e.episode",
        [run_id],
    ):
        try:
            obs = json.loads(e.pop("observation") or "{}")
        except ValueError:
            obs = {}
        op = obs.get("operator") if isinstance(obs, dict) else None
        e["operator"] = op if isinstance(op, dict) else None
        out.append(e)
    return out


def memory_data(conn: sqlite3.Connection, run_id: str | None = None) -> dict[str, Any]:
    """What one learned memory holds, summarised: versions and what moved, α, credit, insights,
    trace yields; for a campaign memory (`run_id`), its rounds with the operator's moves."""
    names = table_names(conn)
    episodes = _episode_of(conn) if "episodes" in names else {}

    def linked(table: str, order: str) -> list[dict[str, Any]]:
        if table not in names:
            return []
        out = rows(conn, f"select * from {table} order by {order}")
        for r in out:
            ep = episodes.get(r.get("thread_id") or "") or {}
            r["run_id"], r["episode"] = ep.get("run_id"), ep.get("episode")
        return out

    versions = _weight_versions(conn, episodes) if "weight_versions" in names else []
    learner = _learner(conn, episodes) if "operator_models" in names else []
    farthest, changes = _moves(versions)
    credit = linked("credit", "created_at, rowid")
    yields, yield_rows = _yields(conn, names)
    rounds = _operator_moves(conn, run_id) if "observations" in names else []
    by_round = {c["thread_id"]: c for c in changes}
    for r in rounds:
        r["refit"] = by_round.get(r["thread_id"])
    return {
        "versions": versions,
        "learner": learner,
        "learner_changes": [v for v in learner if v["changed"]],
        "traits": sorted({t for v in learner for t in v["evidence"]}),
        "families": sorted(farthest),
        "farthest": farthest,
        "moved_families": sorted(f for f, d in farthest.items() if d >= MOVED),
        "changes": changes,
        "alpha": rows(conn, "select * from alpha order by task") if "alpha" in names else [],
        "credit": credit,
        "credit_total": {
            k: sum(c.get(k) or 0 for c in credit) for k in ("better", "worse", "ties", "llm_calls")
        },
        "insights": (
            rows(conn, "select * from insights order by task, importance desc, id")
            if "insights" in names
            else []
        ),
        "yields": yields,
        "yield_rows": yield_rows,
        "rounds": rounds,
    }


def alpha_history(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """α used by every finished episode of the run database, in the order they finished."""
    return rows(
        conn,
        "select thread_id, run_id, episode, task, alpha_used, finished_at from episodes "
        "where status = 'finished' and alpha_used is not null order by finished_at, rowid",
    )


def learning_data(conn: sqlite3.Connection, db_path: Path) -> dict[str, Any]:
    """Every memory the page shows: the run database's own first, then each campaign's."""
    memories: list[dict[str, Any]] = []
    own = memory_data(conn)
    if own["versions"] or own["credit"] or own["insights"] or own["alpha"]:
        memories.append({"memory": MemoryFile("this file's memory", db_path, None), **own})
    found, missing = campaign_memories(conn, db_path)
    for m in found:
        with db.read_only(m.path) as side:
            memories.append({"memory": m, **memory_data(side, m.run_id)})
    return {"memories": memories, "missing": missing, "alpha_history": alpha_history(conn)}
