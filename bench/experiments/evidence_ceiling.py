"""How far can the rule engine's policy go on a shifted ring if its classifier were perfect?

    python bench/experiments/evidence_ceiling.py [--task hard] [--seeds 0-19] [--json]

Seed s plays episode 80000+s under the first regime's playbook of `mixed` campaign 500+s
(unseen by every fit). Three scorers drive the same policy (`tools.rules.propose`):
- `shipped`: the shipped weights (what `static` plays);
- `perfect`: every inspected account scored by the truth (0.99 member / 0.01 innocent), the
  frontier by the shipped exploration model over those scores: a classifier no refit can beat;
- `perfect_investigating`: the same, and where the policy would submit, it first runs
  `investigate_network` around its first flagged account (once), so every member within two hops
  becomes visible before it decides again;
- `perfect_full_budget`: the perfect classifier that never submits early (it inspects the
  likeliest frontier accounts until the budget is spent), to test whether the stopping rule is
  the limit;
- `perfect_pivoting`: the perfect classifier that may pivot from the members it has inspected
  (`pivot_move`): it inspects the starting leads until it knows a member, tries every trace
  from the first member, keeps pivoting from later members
  on the traces whose results held members, and inspects the accounts that member pivots
  returned, likeliest first (a pivot's precision so far, from the accounts of it already
  inspected); where it has no pivot move it plays the rule engine's policy as `perfect` does.
For each lost `perfect` episode it counts the members never flagged and how many of them were
never even visible: members that no inspected account follows can only be reached by
`investigate_network`, whose two hops reveal about two thirds of a hard network at once, so an
evidence-bound agent cannot tell them from the crowd. That bounds what learning (a better
classifier) can buy: the campaign target of 80 % by the third round of a regime is above it.
`perfect_investigating` tests whether visibility is the limit: if it wins no more than
`perfect`, the missing piece is evidence that tells revealed members apart, not exploration.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from fakegang.cli.train import parse_seed_range
from fakegang.tools.rules import engine as rules
from fakegang.tools.rules.actions import parse_action
from fakegang.tools.rules.evidence import CaseView, frontier_features
from fakegang_env.engine import Episode
from fakegang_env.schema import PlainObservation
from fakegang_env.tactics import MIXED, TACTICS_NAMES, campaign_round
from fakegang_env.tasks import get_task
from fakegang_env.traces import PAGE_SIZE, TRACES

SEED_BASE, CAMPAIGN_BASE = 80000, 500


def perfect_scores(obs: PlainObservation, starting: list[str], ring: set[str]) -> tuple:
    """Truth for the inspected accounts, the shipped frontier model on top of it."""
    view = CaseView.build(obs, starting)
    likelihood = {a: 0.99 if a in ring else 0.01 for a in view.profiles}
    weights = rules.load_weights()["frontier"]
    known = sum(likelihood.values())
    frontier = {
        x: rules.logistic(weights, frontier_features(view, x, likelihood, known))
        for x in obs.visible_account_ids
        if x not in view.profiles
    }
    return likelihood, frontier


SCORERS = (
    "shipped",
    "perfect",
    "perfect_investigating",
    "perfect_full_budget",
    "perfect_pivoting",
)
#: The pivoting scorer's two knobs, chosen on seeds 200-249 (episodes 80200+, campaigns 700+),
#: never on the reported seeds 0-49: a page's prior precision is this share of (ring size /
#: total), and an account member pivots returned is inspected from this likelihood on.
PRIOR_SHARE = 0.3
INSPECT_PIVOTED_AT = 0.4  # inspect an account member pivots returned from this likelihood on
#: keep pivoting on a trace while at least this share of its inspected results are members
TRACE_KEPT_AT = 0.25


def _pivot_precision(obs: PlainObservation, ring: set[str]) -> list[tuple[dict, float]]:
    """Member pivots with their precision so far: a prior of (ring size / total), worth two
    accounts, updated by the members among the accounts of its page already inspected."""
    spec = get_task(obs.task)
    ring_guess = (spec.gang_min + spec.gang_max) / 2  # public: GET /tasks gang_size
    inspected = set(obs.inspected_ids)
    out = []
    for p in obs.pivots:
        if p.account_id not in ring:
            continue
        prior = min(0.9, PRIOR_SHARE * ring_guess / max(1, p.total))
        seen = [a for a in p.account_ids if a in inspected]
        hits = sum(a in ring for a in seen)
        out.append((p.model_dump(), (hits + 2 * prior) / (len(seen) + 2)))
    return out


def _next_pivot(obs: PlainObservation, ring: set[str], pivots: list) -> tuple | None:
    """Every trace from the first member; later members only on traces that held members,
    where they were not already on a page, and at most twice on a trace whose pages overflow."""
    inspected = set(obs.inspected_ids)
    tried: dict[str, list[int]] = {t: [0, 0, 0, 0] for t in TRACES}  # hits, seen, n, overflow
    covered: dict[str, set[str]] = {t: set() for t in TRACES}
    for p, _ in pivots:
        seen = [a for a in p["account_ids"] if a in inspected]
        row = tried[p["trace"]]
        row[0] += sum(a in ring for a in seen)
        row[1] += len(seen)
        row[2] += 1
        row[3] += p["total"] > PAGE_SIZE
        covered[p["trace"]].update([p["account_id"], *p["account_ids"]])
    done = {(p.account_id, p.trace) for p in obs.pivots}
    for m in obs.inspected_ids:
        if m not in ring:
            continue
        for t in TRACES:
            hits, seen, n, overflow = tried[t]
            if (m, t) in done or m in covered[t] or (overflow and n >= 2):
                continue
            if seen and hits / seen < TRACE_KEPT_AT:
                continue
            return ("pivot", m, t)
    return None


def pivot_move(
    obs: PlainObservation,
    ring: set[str],
    starting: list[str],
    frontier: dict[str, float] | None = None,
) -> tuple[str, str, str | None] | None:
    """The pivoting layer of a perfect classifier (it knows which inspected accounts are
    members, nothing else): until it knows a member, inspect the starting leads (the reported
    member is one of them); pivot on every trace from the first member; then inspect what
    member pivots returned, likeliest first (noisy-or of their precisions and of the frontier
    model's probability); else pivot from a later member; else None (the policy decides)."""
    inspected = set(obs.inspected_ids)
    if not ring & inspected and obs.steps_remaining >= 2:
        lead = next((a for a in starting if a not in inspected), None)
        if lead is not None:
            return ("inspect", lead, None)
    pivots = _pivot_precision(obs, ring)
    can_pivot = obs.steps_remaining >= 3  # a pivot that empties the budget forces a submit
    first = next((a for a in obs.inspected_ids if a in ring), None)
    done = {(p.account_id, p.trace) for p in obs.pivots}
    if can_pivot and first is not None:
        for t in TRACES:
            if (first, t) not in done:
                return ("pivot", first, t)
    if obs.steps_remaining >= 2:
        miss: dict[str, float] = {}
        for p, prec in pivots:
            for a in p["account_ids"]:
                if a not in inspected:
                    miss[a] = miss.get(a, 1.0) * (1.0 - prec)
        for a in list(miss):
            miss[a] *= 1.0 - (frontier or {}).get(a, 0.0)
        if miss:
            best = min(miss, key=lambda a: (miss[a], obs.visible_account_ids.index(a)))
            if 1.0 - miss[best] >= INSPECT_PIVOTED_AT:
                return ("inspect", best, None)
    return _next_pivot(obs, ring, pivots) if can_pivot else None
    tried: dict[str, list[int]] = {t: [0, 0] for t in TRACES}  # trace -> [members, inspected]
    covered: dict[str, set[str]] = {t: set() for t in TRACES}
    for p, _ in pivots:
        seen = [a for a in p["account_ids"] if a in inspected]
        tried[p["trace"]][0] += sum(a in ring for a in seen)
        tried[p["trace"]][1] += len(seen)
        covered[p["trace"]].update([p["account_id"], *p["account_ids"]])
    done = {(p.account_id, p.trace) for p in obs.pivots}
    for m in obs.inspected_ids:
        if m not in ring:
            continue
        for t in TRACES:
            if (m, t) in done or m in covered[t]:
                continue
            hits, seen = tried[t]
            if seen and hits / seen < TRACE_KEPT_AT:
                continue
            return ("pivot", m, t)
    return None


def play(task: str, seed: int, scorer: str, tactics: str = MIXED) -> dict:
    if tactics == MIXED:
        playbook = campaign_round(task, CAMPAIGN_BASE + seed, 0, MIXED).playbook
        ep = Episode(task, SEED_BASE + seed, tactics=playbook)
    else:  # a named generation on the same unseen seeds
        ep = Episode(task, SEED_BASE + seed, tactics=tactics)
    return play_on(ep, scorer)


def play_on(ep: Episode, scorer: str) -> dict:
    """Play an episode already built (a campaign round's too) with `scorer` to its end."""
    task = ep.task
    ring = set(ep.network.gang_ids)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    cap = get_task(task).max_steps * 3  # the graph's action cap
    investigated = False
    early = scorer != "perfect_full_budget"
    unflagged: set[str] = set()
    for _ in range(cap):
        if obs.done:
            break
        scores = None if scorer == "shipped" else perfect_scores(obs, starting, ring)
        proposal = rules.propose(obs, starting, scores, early_submit=early, unflagged=unflagged)
        kind, account = parse_action(proposal.action)
        trace = None
        if scorer == "perfect_pivoting" and kind not in ("flag", "unflag"):
            move = pivot_move(obs, ring, starting, scores[1] if scores else None)
            if move is not None:
                kind, account, trace = move
        if kind == "unflag" and account:
            unflagged.add(account)
        investigate = scorer == "perfect_investigating" and not investigated
        if investigate and kind == "submit" and obs.flagged_ids:
            kind, account, investigated = "investigate_network", obs.flagged_ids[0], True
        obs = PlainObservation(**ep.step(kind, account, trace))
    if not obs.done:
        obs = PlainObservation(**ep.step("submit", None))
    missed = ring - set(obs.flagged_ids)
    visible = set(obs.visible_account_ids)
    return {
        "won": bool(obs.message.startswith("[WIN]")),
        "steps_used": obs.step_count,
        "missed": len(missed),
        "missed_invisible": len(missed - visible),
    }


def ceiling(
    task: str, seeds: list[int], tactics: str = MIXED, scorers: tuple[str, ...] = SCORERS
) -> dict:
    out: dict = {"task": task, "tactics": tactics, "seeds": [seeds[0], seeds[-1]], "scorers": {}}
    for scorer in scorers:
        t0 = time.perf_counter()
        games = [play(task, s, scorer, tactics) for s in seeds]
        lost = [g for g in games if not g["won"]]
        out["scorers"][scorer] = {
            "win_rate": round(sum(g["won"] for g in games) / len(games), 3),
            "lost": len(lost),
            "lost_with_budget_left": sum(
                g["steps_used"] < get_task(task).max_steps - 1 for g in lost
            ),
            "members_missed": sum(g["missed"] for g in lost),
            "members_missed_never_visible": sum(g["missed_invisible"] for g in lost),
            "seconds": round(time.perf_counter() - t0, 1),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="hard")
    p.add_argument("--seeds", type=parse_seed_range, default=list(range(20)))
    p.add_argument("--tactics", default=MIXED, choices=TACTICS_NAMES)
    p.add_argument(
        "--scorers",
        type=lambda text: tuple(text.split(",")),
        default=SCORERS,
        help=f"comma-separated subset of {','.join(SCORERS)}",
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    unknown = [s for s in args.scorers if s not in SCORERS]
    if unknown:
        p.error(f"unknown scorer {unknown[0]!r}; valid: {', '.join(SCORERS)}")
    res = ceiling(args.task, list(args.seeds), args.tactics, args.scorers)
    if args.json:
        print(json.dumps(res))
        return 0
    print(
        f"{args.task} {args.tactics}, seeds {res['seeds'][0]}-{res['seeds'][1]} (episode 80000+s)"
    )
    for name, r in res["scorers"].items():
        print(
            f"  {name:21s} win {r['win_rate']:.0%}; lost {r['lost']} ({r['lost_with_budget_left']} "
            f"with budget left); members missed {r['members_missed']}, never visible "
            f"{r['members_missed_never_visible']}  ({r['seconds']} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
