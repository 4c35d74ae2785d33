"""The learning page's data: rule-weight versions, α per task, the LLM's credit per episode,
insights, and trace yields when the database has them.

Weight strengths per evidence family are the report's (fakegang/report/learning.py
`family_strengths`), as a share of the shipped weights. Trace yields are a newer table whose
exact columns this page does not assume: any table named like `*yield*` is shown as it is, so a
database written before it simply has no such section.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from fakegang.view.db import rows, table_names

#: Rows of a table of unknown shape (trace yields) shown at most.
GENERIC_LIMIT = 500


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


def learning_data(conn: sqlite3.Connection) -> dict[str, Any]:
    names = table_names(conn)
    episodes = _episode_of(conn)

    def linked(table: str, order: str) -> list[dict[str, Any]]:
        if table not in names:
            return []
        out = rows(conn, f"select * from {table} order by {order}")
        for r in out:
            ep = episodes.get(r.get("thread_id") or "") or {}
            r["run_id"], r["episode"] = ep.get("run_id"), ep.get("episode")
        return out

    yields = []
    for name in sorted(n for n in names if "yield" in n.lower()):
        table_rows = rows(conn, f'select * from "{name}" limit {GENERIC_LIMIT}')
        columns = list(table_rows[0]) if table_rows else []
        yields.append({"table": name, "columns": columns, "rows": table_rows})
    return {
        "versions": _weight_versions(conn, episodes) if "weight_versions" in names else [],
        "alpha": rows(conn, "select * from alpha order by task") if "alpha" in names else [],
        "credit": linked("credit", "created_at, rowid"),
        "insights": (
            rows(conn, "select * from insights order by task, importance desc, id")
            if "insights" in names
            else []
        ),
        "yields": yields,
    }
