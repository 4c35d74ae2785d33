"""The Markdown pieces every rendered block shares: a table, a percentage, the "measured by"
line under a `make bench` figure, and the error a page that cannot be rendered raises."""

from __future__ import annotations

from typing import Any

#: `bench/results/latest.json` as read, plus `_root`: the checkout being rendered.
Results = dict[str, Any]


class RenderError(ValueError):
    """A page whose markers cannot be rendered (unknown name, unclosed block, missing source)."""


def pct(x: float) -> str:
    return f"{x:.0%}"


def source(r: Results) -> str:
    """The line under every measured table: when, where and by what it was measured."""
    day, time = r["date"][:10], r["date"][11:16]
    quick = ", quick smoke settings" if r.get("quick") else ""
    return f"*Measured by `make bench` on {day} at {time} UTC ({r['machine']}{quick}).*"


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
