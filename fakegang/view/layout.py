"""Which accounts the case picture draws one by one, and which it collapses into counted crowds.

A hard episode sees hundreds of accounts, most of them only named in a follow list: drawn one by
one they bury the few the agent worked on. So the accounts that matter (starting, ever inspected,
ever flagged, or revealed by a pivot) are drawn individually, and the rest of the accounts that one
action revealed are drawn as one counted node ("+37") beside the account that revealed them.
Membership is decided once from the whole episode, so nothing regroups while stepping.

Each drawn node gets a `level`: the page lays them out with Cytoscape's `concentric` layout
(labels included in the node sizes, overlap avoided), starting accounts in the middle, then the
accounts that matter in the order they were seen, then the crowds outside. Levels are filled a
ring at a time, each ring holding a few more nodes than the one inside it, so a long episode
makes a disc rather than one huge circle.
"""

from __future__ import annotations

from typing import Any

#: Nodes on the first ring around the starting accounts; each further ring holds RING_GROWTH more.
FIRST_RING = 10
RING_GROWTH = 6


def matters(account: dict[str, Any]) -> bool:
    """Starting, inspected, flagged at some point, or revealed by a pivot (a shared trace)."""
    by = account.get("by") or ""
    return (
        account["seen"] < 0
        or account["inspected"] is not None
        or bool(account["flags"])
        or by.startswith("pivot")
    )


def _capacity(ring: int) -> int:
    return FIRST_RING + RING_GROWTH * (ring - 1)


def _levels(n: int, first: int) -> list[int]:
    """Ring numbers, from `first` outwards, for `n` nodes in order (ring r holds _capacity(r))."""
    out, ring, room = [], first, _capacity(first)
    for _ in range(n):
        if room == 0:
            ring += 1
            room = _capacity(ring)
        out.append(ring)
        room -= 1
    return out


def group_case(accounts: list[dict[str, Any]], revealer: dict[str, str]) -> list[dict[str, Any]]:
    """Set `cluster` (None: drawn alone) and, for those drawn alone, `level` on each account;
    return the crowds: one per revealing action, with its members and the account it hangs on."""
    crowds: dict[int, dict[str, Any]] = {}
    alone = []
    for a in accounts:
        if matters(a):
            a["cluster"] = None
            alone.append(a)
            continue
        c = crowds.setdefault(
            a["seen"],
            {"id": f"crowd:{a['seen']}", "at": a["seen"], "by": a["by"],
             "source": revealer.get(a["id"]), "members": []},
        )  # fmt: skip
        c["members"].append(a["id"])
        a["cluster"] = c["id"]
    for a in alone:
        if a["seen"] < 0:
            a["level"] = 0
    later = sorted((a for a in alone if a["seen"] >= 0), key=lambda a: a["seen"])
    for a, level in zip(later, _levels(len(later), 1), strict=True):
        a["level"] = level
    outer = (later[-1]["level"] + 1) if later else 1
    ordered = sorted(crowds.values(), key=lambda c: c["at"])
    for c, level in zip(ordered, _levels(len(ordered), outer), strict=True):
        c["level"] = level
    return ordered
