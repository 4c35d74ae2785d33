"""The learning page's charts and comparisons, from fakegang/view/learning.py's data.

A chart is drawn only where something moved: α that never changed is one sentence, and only the
evidence families that moved get a line (fifty flat lines at 1.00 on top of each other say
nothing and hide the one that moved).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from fakegang.view.svg import Point, Series, line_chart


def alpha_summary(history: list[dict[str, Any]]) -> dict[str, Any]:
    """α over the finished episodes: one sentence when it never moved, else a chart per task."""
    values = {round(r["alpha_used"], 3) for r in history}
    if len(values) <= 1:
        return {"n": len(history), "flat": next(iter(values), None), "chart": None}
    by_task: dict[str, list[Point]] = {}
    for n, r in enumerate(history, 1):
        by_task.setdefault(r["task"], []).append(
            Point(n, r["alpha_used"], href=f"/episode/{r['thread_id']}",
                  title=f"{r['run_id']} episode {r['episode']}: α {r['alpha_used']:.2f}")
        )  # fmt: skip
    chart = line_chart(
        [Series(t, p) for t, p in sorted(by_task.items())],
        x_label="finished episode (all runs, in order)",
        y_label="α used",
        y_range=(0.0, 1.0),
        height=200,
    )
    return {"n": len(history), "flat": None, "chart": Markup(chart)}


def weights_chart(memory: dict[str, Any]) -> Markup:
    """Per weight version, the strength of each family that moved (none moved: no chart)."""
    moved = memory["moved_families"]
    if not moved:
        return Markup("")
    series = [
        Series(f, [Point(v["version"], v["families"].get(f, 0.0),
                         title=f"v{v['version']} {f}: {v['families'].get(f, 0):.2f}")
                   for v in memory["versions"]])
        for f in moved
    ]  # fmt: skip
    return Markup(
        line_chart(series, x_label="weights version", y_label="weight / shipped", height=200)
    )


def baseline(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per campaign invocation that played learning and a fixed baseline: the rounds each won.
    The baseline is `prior` (the learning agent's start, frozen: the fair one) where it was
    played, else `static` (the shipped weights)."""
    out = []
    for g in groups:
        per_mode: dict[str, list[int]] = {}
        for s in g["series"]:
            done = [p for p in s["points"] if p["status"] == "finished"]
            tally = per_mode.setdefault(str(s["mode"]), [0, 0])
            tally[0] += sum(1 for p in done if p["won"])
            tally[1] += len(done)
        fixed = next((m for m in ("prior", "static") if m in per_mode), None)
        if "learning" in per_mode and fixed:
            modes = {
                m: {"won": w, "rounds": n, "rate": (w / n) if n else None}
                for m, (w, n) in per_mode.items()
            }
            out.append(
                {"tag": g["tag"], "task": g["task"], "tactics": g["tactics"], **modes,
                 "fixed": {"mode": fixed, **modes[fixed]}}
            )  # fmt: skip
    return out
