"""The campaign page's data: the runs `fakegang campaign --db` merged, grouped by invocation.

Each campaign in each mode is a run of its own (`campaign-<tag>-<mode>-c<N>`, its settings say
so: fakegang/runs/campaign.py); its episodes are the rounds, episode k being round k-1. Regimes
come from the environment's schedule (`campaign_schedule`), as the campaign's own plot draws them.
The oracle mode plays no graph episode, so it has no points here.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from fakegang.view.db import rows, settings_of
from fakegang_env.tactics import campaign_schedule


def _regimes(task: str, campaign: int, rounds: int, tactics: str) -> list[str]:
    try:
        return [s.regime for s in campaign_schedule(task, campaign, rounds, tactics)]
    except (ValueError, KeyError):
        return []


def campaign_groups(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """One group per invocation (tag): its settings and one series per (mode, campaign)."""
    groups: dict[str, dict[str, Any]] = {}
    for run in rows(conn, "select * from runs order by started_at, rowid"):
        s = settings_of(run)
        if s.get("kind") != "campaign":
            continue
        tag = str(s.get("tag") or run["run_id"])
        group = groups.setdefault(
            tag,
            {
                "tag": tag,
                "task": s.get("task"),
                "tactics": s.get("tactics"),
                "rounds": s.get("rounds"),
                "model": s.get("model"),
                "started_at": run["started_at"],
                "series": [],
            },
        )
        episodes = rows(
            conn,
            "select thread_id, episode, won, grader_score, reward, steps_used, llm_calls, "
            "alpha_used, status from episodes where run_id = ? order by episode",
            [run["run_id"]],
        )
        regimes = _regimes(
            s.get("task"), s.get("campaign", 0), s.get("rounds") or 0, s.get("tactics")
        )
        for e in episodes:
            k = (e["episode"] or 1) - 1
            e["round"] = k + 1
            e["regime"] = regimes[k] if 0 <= k < len(regimes) else None
        group["series"].append(
            {
                "run_id": run["run_id"],
                "mode": s.get("mode"),
                "campaign": s.get("campaign"),
                "status": run["status"],
                "points": episodes,
            }
        )
    out = list(groups.values())
    for g in out:
        g["series"].sort(key=lambda x: (str(x["mode"]), x["campaign"] or 0))
        g["win_rate"] = _mean_curves(g["series"], g["rounds"] or 0)
    out.sort(key=lambda g: g["started_at"] or "", reverse=True)
    return out


def _mean_curves(series: list[dict[str, Any]], rounds: int) -> dict[str, list[float | None]]:
    """Per mode: the share of its campaigns won at each round (finished rounds only)."""
    out: dict[str, list[float | None]] = {}
    for mode in sorted({str(s["mode"]) for s in series}):
        curve: list[float | None] = []
        for k in range(1, rounds + 1):
            won = [
                bool(p["won"])
                for s in series
                if str(s["mode"]) == mode
                for p in s["points"]
                if p["round"] == k and p["status"] == "finished"
            ]
            curve.append(round(sum(won) / len(won), 4) if won else None)
        out[mode] = curve
    return out
