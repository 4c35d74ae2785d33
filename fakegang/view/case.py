"""The case as the agent saw it after each action: accounts seen, inspected, flagged, and which
action revealed them; after the end, the debrief's ring.

Observations are not stored per step (the state is kept small: graph/state.py), so the episode
is played again in-process from its recorded actions: the environment is deterministic in
(task, seed, playbook) and the action sequence (graph/recovery.py relies on the same fact), and
each replayed message is compared with the one the episode recorded; a mismatch is reported
with its action index instead of a silently wrong picture.

The result is compact: per account the action index that revealed it (-1: a starting account),
when it was inspected and the intervals it was flagged; per follow edge the action that made it
known. The page computes the picture at any step from that without asking the server again.
"""

from __future__ import annotations

from typing import Any

from fakegang.tools.rules.actions import parse_step
from fakegang.view.layout import radial_positions
from fakegang_env.engine import Episode


def start_episode(
    task: str, seed: int, tactics: str | None, campaign: int | None, round: int | None
) -> Episode:
    """The episode as the environment started it (same playbook, same campaign round)."""
    if campaign is not None and round is not None:
        return Episode.for_round(task, campaign, round, tactics or "mixed")
    return Episode(task, seed, tactics=tactics or "classic")


def replay_case(episode: Episode, actions: list[str], messages: list[str | None]) -> dict[str, Any]:
    """Apply `actions` in order; `messages` are the recorded replies (None: unknown)."""
    obs = episode.observation()
    accounts: dict[str, dict[str, Any]] = {}
    for aid in obs["visible_account_ids"]:
        accounts[aid] = {"id": aid, "seen": -1, "by": None, "inspected": None, "flags": []}
    edges: dict[tuple[str, str], int] = {}
    reveals: list[dict[str, Any]] = []
    revealer: dict[str, str] = {}
    diverged_at = None
    for n, action in enumerate(actions):
        kind, target, trace = parse_step(action)
        n_visible = len(accounts)
        obs = episode.step(kind, target, trace)
        recorded = messages[n] if n < len(messages) else None
        if diverged_at is None and recorded is not None and recorded != obs["message"]:
            diverged_at = n
        for aid in obs["visible_account_ids"][n_visible:]:  # the engine only appends
            accounts[aid] = {"id": aid, "seen": n, "by": action, "inspected": None, "flags": []}
            if target:
                reveals.append({"source": target, "target": aid, "at": n})
                revealer[aid] = target
        if obs["last_action_error"]:
            continue
        if kind == "inspect" and target and accounts[target]["inspected"] is None:
            accounts[target]["inspected"] = n
            for dst in obs["graph_edges"].get(target, []):  # its follows, now known
                if dst in accounts:
                    edges.setdefault((target, dst), n)
        if kind == "flag" and target:
            accounts[target]["flags"].append([n, None])
        if kind == "unflag" and target and accounts[target]["flags"]:
            accounts[target]["flags"][-1][1] = n
    known = set(edges) | {(b, a) for a, b in edges}
    radial_positions(list(accounts.values()), revealer)
    final = obs
    ring = final.get("ring_ids") if final.get("done") else None
    debrief = None
    if ring is not None:
        flagged = set(final["flagged_ids"])
        gang = set(ring)
        debrief = {
            "ring": sorted(gang),
            "hits": sorted(flagged & gang),
            "misses": sorted(gang - flagged),
            "false_flags": sorted(flagged - gang),
            "never_seen": sorted(gang - set(final["visible_account_ids"])),
            "grader_score": final.get("grader_score"),
            "recall": final.get("recall"),
            "precision": final.get("precision"),
        }
    return {
        "accounts": list(accounts.values()),
        "edges": [{"source": s, "target": t, "at": at} for (s, t), at in edges.items()],
        "reveals": [r for r in reveals if (r["source"], r["target"]) not in known],
        "starting": list(episode.network.starting_ids),
        "debrief": debrief,
        "diverged_at": diverged_at,
        "actions_replayed": len(actions),
    }
