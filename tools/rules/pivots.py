"""Pivots for the rule engine: what a pivot's page says about the accounts it revealed, and which
pivot to run next.

A pivot from account `a` on trace `t` returns the accounts sharing `a`'s value of `t` (a page of
at most PAGE_SIZE ids and the total count). How much that page is worth depends on one number per
trace, its *yield*: how many other ring members share a member's value of it (about ten for the
proxy block of a ring that shares proxies, about 0.1 when the operator moved to residential
proxies and its members sit in ordinary blocks). The yields are learned from debriefs
(tools/learning/trace_yields.py) and pinned per episode; here they are an input.

Evidence of a revealed account `x` (its origin: trace, from whom, how many shared): each page
holding `x` gives it a chance of being a member, `P(source) · min(0.95, yield / total)`, updated
by the accounts of that page already inspected (their scores count as members found, prior worth
two accounts), and the pages combine with the frontier model's probability by noisy-OR: it
orders the exploration. Once inspected, `x` is judged by its profile; the pivot's *source* is
judged by its pages (`source_evidence`: an empty page on a trace the ring shares clears it). A
trace whose inspected results score low within the episode loses yield (a crowd: stop pivoting
on it).

The choice: from every inspected account likely in the ring (P ≥ PIVOT_FROM) on every trace not
yet run from it and whose earlier pages do not already hold it (same value, same page), the
expected number of new members it reveals, `P(a) · yield · (1 − found / ring size)`. The engine
pivots when that beats PIVOT_MIN_NEW and, per budget step (PIVOT_STEPS), the best inspection.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from fakegang_env.schema import STEP_COST, ActionType, PlainObservation
from fakegang_env.tasks import get_task
from fakegang_env.trace_catalogue import trace_names

#: Pivot only from accounts at least this likely in the ring (a flag, or a strong suspicion).
PIVOT_FROM = 0.5
#: A pivot must be expected to reveal at least this many new members.
PIVOT_MIN_NEW = 1.0
#: A pivot's cost in budget steps (the environment's); one that empties the budget forces a
#: submit.
PIVOT_STEPS = STEP_COST[ActionType.PIVOT]
#: Within an episode a trace's pinned yield is worth this many inspected page accounts.
EPISODE_PRIOR = 3.0
#: A page's own prior precision is worth this many of its inspected accounts.
PAGE_PRIOR = 2.0
MAX_PRECISION = 0.95
#: Share of a pivot page's log-likelihood ratio added to its source's profile score.
SHARED_DISCOUNT = 0.5
#: A page never divides a source's odds by more than 1 / MIN_SOURCE_RATIO (the yields are means).
MIN_SOURCE_RATIO = 0.1


@cache
def _shipped() -> dict[str, dict[str, float]]:
    """Shipped yields: other members sharing a member's value of each trace, on classic networks
    of training seeds (bench/fits/fit_trace_yields.py writes pivot_yields.json)."""
    text = resources.files("fakegang.tools.rules").joinpath("pivot_yields.json").read_text()
    return json.loads(text)["yields"]


def shipped_yields(task: str) -> dict[str, float]:
    """The task's shipped yields (hard's for an unknown task); a kind the fit has not seen yet
    gets 0: no pivot on it is expected to find anyone until the fit is re-run."""
    shipped = _shipped()
    fitted = shipped.get(task, shipped["hard"])
    return {t: fitted.get(t, 0.0) for t in trace_names()}


def ring_guess(task: str) -> float:
    """The ring size a task announces (GET /tasks gang size): the middle of its range."""
    spec = get_task(task)
    return (spec.gang_min + spec.gang_max) / 2


@dataclass(frozen=True)
class PivotMove:
    """A pivot the engine may run: expected new members it reveals, and why."""

    account_id: str
    trace: str
    expected_new: float
    reason: str


def episode_yields(
    obs: PlainObservation, likelihood: Mapping[str, float], pinned: Mapping[str, float]
) -> dict[str, float]:
    """The pinned yields corrected by this episode's pivots: a page from a likely member whose
    inspected accounts score low is a crowd (fewer members per total than the pin says)."""
    inspected = set(likelihood)
    out = {}
    for t in trace_names():
        num, den = EPISODE_PRIOR * pinned.get(t, 0.0), EPISODE_PRIOR
        for p in obs.pivots:
            if p.trace != t:
                continue
            src = likelihood.get(p.account_id, 0.0)
            seen = [a for a in p.account_ids if a in inspected]
            if src < PIVOT_FROM or not seen:
                continue
            hits = sum(likelihood[a] for a in seen)
            members = hits / len(seen) * p.total / src  # members of its value, if src is one
            num += len(seen) * min(members, float(p.total))
            den += len(seen)
        out[t] = num / den
    return out


def page_precisions(
    obs: PlainObservation, likelihood: Mapping[str, float], yields: Mapping[str, float]
) -> list[float]:
    """P(an uninspected account of each pivot's page is a member), in `obs.pivots` order."""
    inspected = set(likelihood)
    out = []
    for p in obs.pivots:
        src = likelihood.get(p.account_id, 0.0)
        base = src * min(MAX_PRECISION, yields.get(p.trace, 0.0) / max(1, p.total))
        seen = [a for a in p.account_ids if a in inspected]
        hits = sum(likelihood[a] for a in seen)
        out.append((hits + PAGE_PRIOR * base) / (len(seen) + PAGE_PRIOR))
    return out


def pivot_evidence(
    obs: PlainObservation, likelihood: Mapping[str, float], yields: Mapping[str, float]
) -> dict[str, float]:
    """Uninspected account -> P(member) from the pivot pages that hold it (noisy-OR)."""
    if not obs.pivots:
        return {}
    miss: dict[str, float] = {}
    for p, prec in zip(obs.pivots, page_precisions(obs, likelihood, yields), strict=True):
        for a in p.account_ids:
            if a not in likelihood:
                miss[a] = miss.get(a, 1.0) * (1.0 - prec)
    return {a: 1.0 - m for a, m in miss.items()}


def source_evidence(
    obs: PlainObservation, likelihood: Mapping[str, float], yields: Mapping[str, float]
) -> dict[str, float]:
    """Inspected source of a pivot -> its P(member) updated by its pages (`source_ratio`): a
    member's value holds the ring's share of the other members, so an empty page, or a page of
    inspected innocents, is evidence against the source and a page of members evidence for it.
    One pass over the profile scores (no account lifts itself through a loop), discounted by
    SHARED_DISCOUNT because the profile model already reads part of each trace (shared IPs,
    ages, posting hours, content scores).

    The page's own accounts are not lifted by the source: sharing a value with a likely member
    flagged 3-6 innocents per lost episode on classic hard rings (a crowd sharing the ring's
    proxy block or creation window), so an inspected account is judged by its profile alone."""
    spec = get_task(obs.task)
    ring = ring_guess(obs.task)
    log_odds: dict[str, float] = {}
    for p in obs.pivots:
        src = p.account_id
        if src not in likelihood:
            continue
        partners = [likelihood[a] for a in p.account_ids if a in likelihood and a != src]
        lr = source_ratio(yields.get(p.trace, 0.0), ring, spec.n_accounts, p.total, partners)
        log_odds[src] = log_odds.get(src, 0.0) + SHARED_DISCOUNT * math.log(lr)
    return {x: _update(likelihood[x], d) for x, d in log_odds.items()}


def source_ratio(
    trace_yield: float, ring: float, n_accounts: int, total: int, partners: list[float]
) -> float:
    """`P(page | source is a member) / P(page | innocent)` for one pivot page of `total`
    accounts whose inspected accounts (the source aside) have P(member) `partners`.

    A member sits on the ring's value with chance `s = yield / (ring - 1)` (its page then holds
    members at rate `f = yield / total`), otherwise on an ordinary value like an innocent's
    (members at the base rate `ring / n_accounts`). An empty page cannot be the ring's value;
    each inspected account of the page is a member at rate `f` or at the base rate."""
    s = min(1.0, max(0.0, trace_yield / max(1.0, ring - 1)))
    if total == 0:
        return max(MIN_SOURCE_RATIO, 1.0 - s)
    f = min(MAX_PRECISION, trace_yield / total)
    base = ring / max(1.0, n_accounts)
    ratio = 1.0
    for q in partners:
        ratio *= (f * q + (1.0 - f) * (1.0 - q)) / (base * q + (1.0 - base) * (1.0 - q))
    return max(MIN_SOURCE_RATIO, s * ratio + (1.0 - s))


def _update(p: float, log_ratio: float) -> float:
    """`p` after multiplying its odds by `exp(log_ratio)`."""
    p0 = min(1 - 1e-6, max(1e-6, p))
    z = math.log(p0 / (1 - p0)) + log_ratio
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def combine(frontier: dict[str, float], evidence: Mapping[str, float]) -> dict[str, float]:
    """The frontier model's probability and the pivot evidence, by noisy-OR."""
    if not evidence:
        return frontier
    return {x: 1.0 - (1.0 - q) * (1.0 - evidence.get(x, 0.0)) for x, q in frontier.items()}


def candidates(
    obs: PlainObservation, likelihood: Mapping[str, float], pinned: Mapping[str, float]
) -> list[PivotMove]:
    """Every pivot worth considering, best first (ties: inspection order, trace catalogue)."""
    if obs.steps_remaining < PIVOT_STEPS + 1:
        return []
    yields = episode_yields(obs, likelihood, pinned)
    done = {(p.account_id, p.trace) for p in obs.pivots}
    covered: dict[str, set[str]] = {t: set() for t in trace_names()}
    for p in obs.pivots:
        covered[p.trace].add(p.account_id)
        covered[p.trace].update(p.account_ids)
    ring = ring_guess(obs.task)
    found = min(ring, sum(likelihood.values()))
    novelty = max(0.0, 1.0 - found / ring)
    out = []
    for i, a in enumerate(obs.inspected_ids):
        pa = likelihood.get(a, 0.0)
        if pa < PIVOT_FROM:
            continue
        for j, t in enumerate(trace_names()):
            if (a, t) in done or a in covered[t]:
                continue
            new = pa * min(yields[t], ring - 1) * novelty
            why = f"pivot on {t} from P(ring)={pa:.2f}: ~{new:.1f} new members ({yields[t]:.1f})"
            out.append((-new, i, j, PivotMove(a, t, round(new, 3), why)))
    out.sort(key=lambda r: r[:3])
    return [m for *_, m in out]
