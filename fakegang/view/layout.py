"""Where each account of the case is drawn: a radial tree of who revealed whom.

The starting accounts sit on the inner ring; every other account sits one ring further out than
the account whose inspection or investigation revealed it, inside the angle its revealer owns
(angles shared out by subtree size). The picture itself says how the case grew, positions are
fixed for the whole episode (nothing jumps while stepping), and the layout is linear in the
number of accounts, where a force-directed layout in the page (Cytoscape's `cose`) took seconds
on the 480 accounts of a long hard episode. Rings widen with their population so neighbours
keep a minimum spacing; half of the circle is shared equally between the starting accounts so
that those which revealed little do not pile up beside one that revealed much.
"""

from __future__ import annotations

import math
from typing import Any

RING_STEP = 110.0  # px between rings
MIN_SPACING = 18.0  # px between neighbours on a ring


def radial_positions(accounts: list[dict[str, Any]], reveals_parent: dict[str, str]) -> None:
    """Set `x`, `y` on each account dict; `reveals_parent` maps an account to its revealer."""
    ids = [a["id"] for a in accounts]
    known = set(ids)
    children: dict[str | None, list[str]] = {}
    for aid in ids:
        parent = reveals_parent.get(aid)
        children.setdefault(parent if parent in known else None, []).append(aid)
    weight: dict[str, int] = {}
    depth: dict[str, int] = {}

    def measure(node: str, d: int) -> int:  # iterative would be safer; trees here are shallow
        depth[node] = d
        weight[node] = max(1, sum(measure(c, d + 1) for c in children.get(node, [])))
        return weight[node]

    roots = children.get(None, [])
    for r in roots:
        measure(r, 1)
    per_ring: dict[int, int] = {}
    for d in depth.values():
        per_ring[d] = per_ring.get(d, 0) + 1
    radius: dict[int, float] = {}
    last = 0.0
    for d in sorted(per_ring):
        needed = per_ring[d] * MIN_SPACING / (2 * math.pi)
        last = max(last + RING_STEP, needed, d * RING_STEP)
        radius[d] = last
    if len(roots) == 1:
        radius = {d: r - RING_STEP for d, r in radius.items()}
    pos: dict[str, tuple[float, float]] = {}

    def place(node: str, start: float, span: float) -> None:
        angle = start + span / 2
        r = radius[depth[node]]
        pos[node] = (round(r * math.cos(angle), 1), round(r * math.sin(angle), 1))
        offset = start
        for c in children.get(node, []):
            share = span * weight[c] / weight[node]
            place(c, offset, share)
            offset += share

    total = sum(weight[r] for r in roots) or 1
    offset = -math.pi / 2
    for r in roots:  # half the circle shared equally: starting accounts never pile up
        share = 2 * math.pi * (0.5 / len(roots) + 0.5 * weight[r] / total)
        place(r, offset, share)
        offset += share
    for a in accounts:
        a["x"], a["y"] = pos.get(a["id"], (0.0, 0.0))
