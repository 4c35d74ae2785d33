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
Which accounts are drawn alone and which in counted crowds is fakegang/view/layout.py's; why
each flagged or missed account is in the case is fakegang/view/explain.py's.
"""

from __future__ import annotations

from typing import Any

from fakegang.tools.rules.actions import parse_step
from fakegang.view.explain import Explainer, odds_note
from fakegang.view.layout import group_case
from fakegang_env.engine import Episode
from fakegang_env.tactics import ADAPTIVE, Playbook


def start_episode(
    task: str,
    seed: int,
    tactics: str | None,
    campaign: int | None,
    round: int | None,
    played: dict[str, float] | None = None,
) -> Episode:
    """The episode as the environment started it (same playbook, same campaign round). An
    adaptive round's playbook is known once the round has ended: `played`, from its debrief."""
    if tactics == ADAPTIVE:
        if played is None:
            raise ValueError("an adaptive round's playbook is revealed only once the round ends")
        return Episode(task, seed, tactics=Playbook(ADAPTIVE, played))
    if campaign is not None and round is not None:
        return Episode.for_round(task, campaign, round, tactics or "mixed")
    return Episode(task, seed, tactics=tactics or "classic")


def replay_case(
    episode: Episode,
    actions: list[str],
    messages: list[str | None],
    explainer: Explainer | None = None,
) -> dict[str, Any]:
    """Apply `actions` in order; `messages` are the recorded replies (None: unknown).
    With an `explainer`, each account flagged or missed at the end explains itself."""
    obs = episode.observation()
    before_flag: dict[int, dict[str, Any]] = {}  # action index -> the observation it was taken on
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
        if kind == "flag" and explainer is not None:
            before_flag[n] = obs
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
    crowds = group_case(list(accounts.values()), revealer)
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
    why = _why(accounts, revealer, final, debrief, before_flag, explainer, len(actions))
    return {
        "accounts": list(accounts.values()),
        "crowds": crowds,
        "why": why,
        "edges": [{"source": s, "target": t, "at": at} for (s, t), at in edges.items()],
        "reveals": [r for r in reveals if (r["source"], r["target"]) not in known],
        "starting": list(episode.network.starting_ids),
        "debrief": debrief,
        "diverged_at": diverged_at,
        "actions_replayed": len(actions),
    }


def _why(
    accounts: dict[str, dict[str, Any]],
    revealer: dict[str, str],
    final: dict[str, Any],
    debrief: dict[str, Any] | None,
    before_flag: dict[int, dict[str, Any]],
    explainer: Explainer | None,
    n_actions: int,
) -> dict[str, dict[str, Any]]:
    """Per account flagged at the end (and each missed member once the ring is known): how it was
    found, when it was inspected and flagged, its evidence, and whether it was a member."""
    if explainer is None:
        return {}
    ring = set(debrief["ring"]) if debrief else None
    wanted = list(final["flagged_ids"]) + sorted((ring or set()) - set(final["flagged_ids"]))
    out = {}
    for aid in wanted:
        a = accounts.get(aid)
        if a is None:  # a member the agent never saw
            out[aid] = {"id": aid, "seen": None, "member": True, "evidence": None}
            continue
        last_flag = a["flags"][-1][0] if a["flags"] and a["flags"][-1][1] is None else None
        if last_flag is not None and last_flag in before_flag:
            evidence = explainer.explain(aid, last_flag, before_flag[last_flag])
        else:
            evidence = explainer.explain(aid, n_actions, final)
        evidence["note"] = odds_note(evidence)
        out[aid] = {
            "id": aid,
            "seen": a["seen"],
            "by": a["by"],
            "from": revealer.get(aid),
            "inspected": a["inspected"],
            "flagged": last_flag,
            "member": (aid in ring) if ring is not None else None,
            "evidence": evidence,
        }
    return out
