"""The deterministic rule engine: the agent's safety net.

It scores every inspected account with a logistic model over evidence features
(tools/rules/evidence.py) whose weights were fitted offline on generated episodes
(bench/fits/fit_rule_weights.py writes tools/rules/rule_weights.json), so a FLAG's confidence is a
probability that means something. Visible but uninspected accounts get a second model's probability
of being in the ring, which orders the exploration and decides when nothing worth a step is left.

Priority each step: before the first flag, inspect every starting account (the report an analyst
starts from: one member at least, and look-alikes; committing to the first likely one sent the
whole episode down an innocent community's traces; once read, each starting account scores at
least the report reader's chance that it is the reported member, tools/rules/report_reader.py)
→ flag the likeliest unflagged member
(p ≥ FLAG_AT; with as many flags as the task's largest ring, unflag the weakest instead when it is
SWAP_MARGIN less likely) → unflag a flag the evidence no longer supports → pivot when a pivot pays
more than an inspection → submit when the frontier is exhausted → inspect the likeliest frontier
account → submit. An account unflagged once in an episode is never flagged again by the rule (see
`propose`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from fakegang.tools.rules import pivots as pivoting
from fakegang.tools.rules import report_reader
from fakegang.tools.rules.actions import format_action
from fakegang.tools.rules.evidence import CaseView, frontier_features, profile_features
from fakegang_env.schema import PlainObservation
from fakegang_env.tasks import get_task

FLAG_AT = 0.5
UNFLAG_BELOW = 0.3
#: With as many flags as the task's largest ring, a flag must beat the weakest one by this much.
SWAP_MARGIN = 0.1
#: Stop exploring when the likeliest frontier account is below this and the expected number of
#: ring members left on the frontier is below STOP_EXPECTED.
#: Per task, because hard's win rule (recall ≥ 0.9) makes a missed member costlier than steps.
STOP_MAX_Q = {"easy": 0.12, "medium": 0.12, "hard": 0.01}
STOP_EXPECTED = {"easy": 0.6, "medium": 0.6, "hard": 0.05}
FRONTIER_TOP = 12
#: The score of an account a dropped hypothesis ruled out (`score_case`).
RULED_OUT = 0.01
#: A hypothesis from the report: with this share of the budget spent, the report read and nothing
#: flagged, the best-scored starting account is flagged (the report says one of them is a member;
#: flagged, it gives the others core evidence to be recognised by) and held; it is unflagged if
#: it is still the only flag HYPOTHESIS_PATIENCE of the budget later, and at most HYPOTHESES are
#: tried an episode (docs/design-decisions.md, "A hypothesis from the report").
HYPOTHESIS_AFTER = 0.3
HYPOTHESIS_PATIENCE = 0.1
HYPOTHESES = 2
#: How sure the rule is that reading every starting account before the first flag is right (it
#: is procedure, not evidence: high enough that only a trusted LLM is asked instead).
READ_THE_REPORT_CONFIDENCE = 0.9
EXPLORATION_CONFIDENCE_FLOOR = 0.3
#: The LLM's menu leaves out flags and unflags the evidence clearly contradicts.
MENU_FLAG_MIN = 0.25
MENU_UNFLAG_MAX = 0.5
#: ... and offers the best pivots expected to reveal at least MENU_PIVOT_MIN new members.
MENU_PIVOTS = 2
MENU_PIVOT_MIN = 0.5
#: How many of each a trusted LLM's (wide) menu offers; its inspections come from the whole
#: frontier, not the engine's top FRONTIER_TOP: a trusted model confined to the rule's best few
#: cannot reach members the rule ranks low (docs/design-decisions.md, "Numbers behind the
#: constants").
WIDE_MENU = {"flag": 10, "inspect": 24, "pivot": 4, "unflag": 3}


@dataclass(frozen=True)
class Proposal:
    """The rule engine's answer for one step."""

    action: str
    confidence: float
    reason: str
    choices: list[str] = field(default_factory=list)  # the menu offered the LLM, the rule's first
    likelihood: dict[str, float] = field(default_factory=dict)  # inspected id -> P(gang)
    frontier: dict[str, float] = field(default_factory=dict)  # uninspected id -> P(gang)
    hypothesis: bool = False  # the action flags a hypothesis from the report (callers record it)


@lru_cache(maxsize=1)
def load_weights() -> dict[str, dict[str, float]]:
    text = resources.files("fakegang.tools.rules").joinpath("rule_weights.json").read_text()
    data = json.loads(text)
    calibration = data.get("flag_calibration", {})
    return {"profile": data["profile"], "frontier": data["frontier"], "flag": calibration}


def flag_confidence(p: float) -> float:
    """P(really in the ring | the engine flags at evidence score p), fitted on flag decisions.

    Flags are taken on the likeliest account of the moment, so the raw score of a flagged
    account is not yet the chance it is right; the share of right flags per score bin on
    training seeds is (histogram binning, bench/fits/fit_rule_weights.py).
    """
    cal = load_weights()["flag"]
    if not cal:
        return p
    edges, conf = cal["edges"], cal["confidence"]
    for i in range(len(conf)):
        if p < edges[i + 1]:
            return conf[i]
    return conf[-1]


def logistic(weights: dict[str, float], feats: dict[str, float]) -> float:
    z = weights.get("bias", 0.0) + sum(weights.get(k, 0.0) * v for k, v in feats.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def score_case(
    view: CaseView,
    weights: dict[str, Any] | None = None,
    yields: Mapping[str, float] | None = None,
    ruled_out: Collection[str] = (),
    *,
    read_report: bool = True,
) -> tuple[dict[str, float], dict[str, float]]:
    """P(gang) for inspected accounts and for the uninspected frontier.

    `weights` (profile/frontier) are the refit ones pinned by the episode
    (tools/learning/experience.py); None means the shipped weights. Accounts revealed by pivots
    also carry their origin (tools/rules/pivots.py) under the trace `yields` pinned by the
    episode (None: the shipped ones); an episode that never pivots scores exactly as before.
    `ruled_out` inspected accounts score RULED_OUT wherever the frontier and the pivots read
    them, so a hypothesis the policy dropped stops steering the exploration (the shipped policy
    rules nothing out; bench/experiments/second_hypothesis.py tries it). `read_report` False
    scores without the report reader (that experiment replays the engine from before it)."""
    weights = weights or load_weights()
    model = weights.get("profile_model")  # the learner of the current operator, if pinned
    if model is None:
        likelihood = {
            a: logistic(weights["profile"], profile_features(view, a)) for a in view.profiles
        }
    else:
        ids = list(view.profiles)
        probabilities = model.probabilities([profile_features(view, a) for a in ids])
        likelihood = dict(zip(ids, probabilities, strict=True))
    if read_report:
        likelihood = _read_report(view, likelihood)
    likelihood = _rule_out(likelihood, ruled_out)
    frontier = {}
    known = sum(likelihood.values())
    baseline: float | None = None  # accounts nobody known points at share one score
    for x in view.obs.visible_account_ids:
        if x in view.profiles:
            continue
        if x in view.followers or x in view.suspects or x in view.starting:
            feats = frontier_features(view, x, likelihood, known)
            frontier[x] = logistic(weights["frontier"], feats)
        else:
            if baseline is None:
                feats = frontier_features(view, x, likelihood, known)
                baseline = logistic(weights["frontier"], feats)
            frontier[x] = baseline
    if view.obs.pivots:
        pinned = pivoting.shipped_yields(view.obs.task) if yields is None else yields
        found = pivoting.episode_yields(view.obs, likelihood, pinned)
        judged = pivoting.source_evidence(view.obs, likelihood, found)
        likelihood = _rule_out({**likelihood, **judged}, ruled_out)
        evidence = pivoting.pivot_evidence(view.obs, likelihood, found)
        frontier = pivoting.combine(frontier, evidence)
    return likelihood, frontier


def _flag_reason(obs: PlainObservation, starting_ids: list[str], account_id: str, p: float) -> str:
    """Why the rule flags: the evidence, or the report reader when its share set the score."""
    if account_id in starting_ids:
        profiles = {q.account_id: q for q in obs.visible_accounts}
        share = report_reader.posterior(obs.task, profiles, starting_ids)
        if share is not None and share.get(account_id, 0.0) >= p:
            return f"the report's likeliest member: {p:.2f} by the report reader"
    return f"evidence score {p:.2f} from combined signals"


def _read_report(view: CaseView, likelihood: dict[str, float]) -> dict[str, float]:
    """Each starting account scores at least the report reader's chance that it is the reported
    member, once every starting account is inspected (tools/rules/report_reader.py)."""
    found = report_reader.posterior(view.obs.task, view.profiles, list(view.starting))
    if found is None:
        return likelihood
    return {a: max(p, found.get(a, 0.0)) for a, p in likelihood.items()}


def _rule_out(likelihood: dict[str, float], ruled_out: Collection[str]) -> dict[str, float]:
    if not ruled_out:
        return likelihood
    return {a: RULED_OUT if a in ruled_out else p for a, p in likelihood.items()}


def score_observation(
    obs: PlainObservation,
    starting_ids: list[str],
    weights: dict[str, Any] | None = None,
    yields: Mapping[str, float] | None = None,
    ruled_out: Collection[str] = (),
    *,
    read_report: bool = True,
) -> tuple[dict[str, float], dict[str, float]]:
    view = CaseView.build(obs, starting_ids)
    return score_case(view, weights, yields, ruled_out, read_report=read_report)


def propose(
    obs: PlainObservation,
    starting_ids: list[str],
    scores: tuple[dict[str, float], dict[str, float]] | None = None,
    *,
    early_submit: bool = True,
    llm_verdicts: Mapping[str, str] | None = None,
    unflagged: Collection[str] = (),
    pivot_yields: Mapping[str, float] | None = None,
    wide_menu: bool = False,
    hypotheses: Sequence[tuple[str, int]] | None = None,
) -> Proposal:
    """Decide one action for this observation (pure function of its inputs).

    `scores` lets a caller that already scored the case (the observe node) skip the work.
    `llm_verdicts` (account -> "flag" | "unflag") are the flag decisions the LLM made while it
    was trusted to decide; the rule does not reverse them by itself. Without that, a trusted LLM
    flagging an account the rule scores low (or unflagging one it scores high) and the rule
    reversing it on the next step looped until the graph's action cap. The LLM's menu still
    offers the reversal.
    `unflagged` are the accounts unflagged earlier in this episode (by anyone): the rule does
    not flag them again. Flags and unflags cost no budget step, so a pair of accounts whose
    scores depend on each other being flagged (refit weights can make them) would loop flag,
    flag, unflag, unflag until the action cap and lose with the budget unspent
    (docs/design-decisions.md, "Numbers behind the constants").
    `pivot_yields` (trace -> members a member's pivot reveals, pinned by the episode) turns on
    pivots (tools/rules/pivots.py): after the flags, a pivot expected to reveal more new members
    per budget step than the best inspection finds is run before inspecting or submitting, and
    the menu offers the best two. None: the engine never pivots (the classic policy).
    `wide_menu` (an LLM trusted to decide wherever the rule is not near-certain) offers every
    inspected account to flag, more inspections, pivots and unflags: a trusted model is not held
    to what the rule already sees (its choices change nothing else in the proposal).
    `hypotheses` are the hypotheses from the report flagged so far this episode, as (account,
    step count when flagged), recorded by the caller from proposals with `hypothesis` set: the
    rule keeps a hypothesis flagged until HYPOTHESIS_PATIENCE of the budget shows no other flag.
    None: the caller does not record them, and the engine makes no hypothesis (it would unflag
    an unrecorded one for its low score and flag it again, flags costing no budget step).
    """
    verdicts = llm_verdicts or {}
    likelihood, frontier = scores or score_observation(obs, starting_ids)
    flagged = set(obs.flagged_ids)
    ranked_frontier = sorted(frontier.items(), key=lambda kv: (-kv[1], _order(obs, kv[0])))
    top_frontier = ranked_frontier[:FRONTIER_TOP]
    can_inspect = obs.steps_remaining >= 2  # an inspect that empties the budget forces a submit

    flag_candidates = sorted(
        ((p, a) for a, p in likelihood.items() if a not in flagged), reverse=True
    )
    once_unflagged = set(unflagged)
    rule_flag_candidates = [
        (p, a)
        for p, a in flag_candidates
        if verdicts.get(a) != "unflag" and a not in once_unflagged
    ]
    flagged_by_score = sorted((p, a) for a, p in likelihood.items() if a in flagged)
    held = {a: at for a, at in hypotheses or () if a in flagged}
    unflag_candidates = [
        (p, a) for p, a in flagged_by_score if verdicts.get(a) != "flag" and a not in held
    ]
    pivot_moves = (
        pivoting.candidates(obs, likelihood, pivot_yields) if pivot_yields is not None else []
    )
    menu_frontier = ranked_frontier if wide_menu else top_frontier
    choices = _choices(
        flag_candidates, flagged_by_score, menu_frontier, can_inspect, pivot_moves, wide_menu
    )

    def done(action: str, confidence: float, reason: str, hypothesis: bool = False) -> Proposal:
        if action in choices:  # the rule's own action leads the menu
            choices.remove(action)
        choices.insert(0, action)
        return Proposal(
            action,
            round(confidence, 4),
            reason,
            choices,
            likelihood,
            dict(top_frontier),
            hypothesis,
        )

    task = get_task(obs.task)
    ring_max, budget = task.gang_max, task.max_steps
    starting = set(starting_ids)
    unread = [x for x, _ in ranked_frontier if x in starting] if can_inspect and not flagged else []
    if unread:  # the likeliest first, in the frontier's own order
        return done(
            format_action("inspect", unread[0]),
            READ_THE_REPORT_CONFIDENCE,
            f"read the report first: {len(unread)} starting accounts not inspected yet",
        )
    if len(held) == 1 == len(flagged):
        ((seed, at),) = held.items()
        if obs.step_count - at >= HYPOTHESIS_PATIENCE * budget:
            return done(
                format_action("unflag", seed),
                1 - likelihood.get(seed, 0.0),
                f"hypothesis dropped: still the only flag {obs.step_count - at} steps later",
            )
    if rule_flag_candidates and rule_flag_candidates[0][0] >= FLAG_AT:
        p, a = rule_flag_candidates[0]
        if len(flagged) < ring_max:
            why = _flag_reason(obs, starting_ids, a, p)
            return done(format_action("flag", a), flag_confidence(p), why)
        if unflag_candidates and unflag_candidates[0][0] < p - SWAP_MARGIN:
            q, b = unflag_candidates[0]
            return done(
                format_action("unflag", b),
                1 - q,
                f"the ring has at most {ring_max} accounts: P(ring)={q:.2f} makes room for {p:.2f}",
            )
    if unflag_candidates and unflag_candidates[0][0] < UNFLAG_BELOW:
        p, a = unflag_candidates[0]
        return done(format_action("unflag", a), 1 - p, f"evidence fell to P(ring)={p:.2f}")
    seed = _hypothesis(obs, budget, starting_ids, likelihood, hypotheses, once_unflagged, verdicts)
    if seed is not None:
        a, share = seed
        return done(
            format_action("flag", a),
            share,
            f"hypothesis from the report: nothing flagged after {obs.step_count} steps; the "
            f"likeliest starting account (P(ring)={likelihood[a]:.2f}, {share:.0%} of the "
            "starting accounts' total)",
            hypothesis=True,
        )

    expected_left = sum(q for _, q in top_frontier)
    max_q = top_frontier[0][1] if top_frontier else 0.0
    best = pivot_moves[0] if pivot_moves else None
    if (
        best is not None
        and best.expected_new >= pivoting.PIVOT_MIN_NEW
        and best.expected_new / pivoting.PIVOT_STEPS > max_q
    ):
        conf = min(0.9, best.expected_new / (best.expected_new + 1.0))
        return done(format_action("pivot", best.account_id, best.trace), conf, best.reason)
    if not can_inspect or not top_frontier:
        why = "budget spent" if not can_inspect else "nothing left to inspect"
        return done("submit", 0.95, why)
    stop_q, stop_expected = STOP_MAX_Q.get(obs.task, 0.12), STOP_EXPECTED.get(obs.task, 0.6)
    if early_submit and flagged and max_q < stop_q and expected_left < stop_expected:
        conf = max(0.5, 1.0 - expected_left)
        return done(
            "submit", conf, f"frontier exhausted: best q={max_q:.2f}, expected {expected_left:.2f}"
        )
    x, q = top_frontier[0]
    conf = max(EXPLORATION_CONFIDENCE_FLOOR, min(0.95, q))
    return done(format_action("inspect", x), conf, f"likeliest unexplored account q={q:.2f}")


def _hypothesis(
    obs: PlainObservation,
    budget: int,
    starting_ids: list[str],
    likelihood: Mapping[str, float],
    hypotheses: Sequence[tuple[str, int]] | None,
    once_unflagged: Collection[str],
    verdicts: Mapping[str, str],
) -> tuple[str, float] | None:
    """The starting account to flag as a hypothesis, with its share of the starting accounts'
    total score (its chance to be the reported member if exactly one is), or None: the caller
    records no hypotheses, something is flagged, the report is unread, it is too early, or
    HYPOTHESES were tried."""
    if hypotheses is None or obs.flagged_ids or len(hypotheses) >= HYPOTHESES:
        return None
    if obs.step_count < HYPOTHESIS_AFTER * budget:
        return None
    if any(a not in likelihood for a in starting_ids):
        return None
    tried = {a for a, _ in hypotheses} | set(once_unflagged)
    left = [
        (likelihood[a], a) for a in starting_ids if a not in tried and verdicts.get(a) != "unflag"
    ]
    if not left:
        return None
    p, a = max(left)
    total = sum(likelihood[x] for x in starting_ids)
    return a, (p / total if total > 0 else 1.0 / len(starting_ids))


def _order(obs: PlainObservation, account_id: str) -> int:
    try:
        return obs.visible_account_ids.index(account_id)
    except ValueError:
        return 1 << 30


def _choices(
    flag_candidates: list[tuple[float, str]],
    unflag_candidates: list[tuple[float, str]],
    top_frontier: list[tuple[str, float]],
    can_inspect: bool,
    pivot_moves: list[pivoting.PivotMove] = (),  # type: ignore[assignment]
    wide: bool = False,
) -> list[str]:
    """A short menu of sensible legal actions for the LLM (never the whole network): the best
    flags, inspections and pivots, an unflag, submit; `wide`: WIDE_MENU of each, whatever the
    evidence says."""
    n = WIDE_MENU if wide else {"flag": 3, "inspect": 4, "pivot": MENU_PIVOTS, "unflag": 1}
    flag_min, pivot_min, unflag_max = (
        (0.0, 0.0, 1.01) if wide else (MENU_FLAG_MIN, MENU_PIVOT_MIN, MENU_UNFLAG_MAX)
    )
    out: list[str] = []
    for p, a in flag_candidates[: n["flag"]]:
        if p >= flag_min:
            out.append(format_action("flag", a))
    if can_inspect:
        for x, _ in top_frontier[: n["inspect"]]:
            out.append(format_action("inspect", x))
    for m in pivot_moves[: n["pivot"]]:
        if m.expected_new >= pivot_min:
            out.append(format_action("pivot", m.account_id, m.trace))
    for p, a in unflag_candidates[: n["unflag"]]:
        if p < unflag_max:
            out.append(format_action("unflag", a))
    out.append("submit")
    return out
