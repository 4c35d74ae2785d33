"""α earned by counterfactual credit: trust the LLM only where it beat the rule.

Why not the original script's formula: it grows α with the task's win rate, which the *rules* earn,
so the weakest model gets the most calls. Learning-to-defer (Madras 2018; Mozannar & Sontag 2020)
credits the expert only on the instances where its answer is right. Here the debrief (the ring's ids
at the end of the episode) judges every step where the LLM's proposal differed from the rule's:
`action_value` says which of the two actions was better given the truth, and ties (both flag a
member, both inspect an innocent) earn nothing. Agreement earns nothing either.

Because the debrief labels every proposal, a proposal the agent did not act on (a "shadow" call
made while α is low) is judged exactly like one it acted on: that is how a model earns trust
without the agent paying for its mistakes. Those shadow calls are the bounded exploration budget.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from fakegang.tools.learning.alpha import ALPHA_CAPS, ALPHA_FLOOR, DEFAULT_CAP
from fakegang.tools.rules.actions import parse_action, parse_step

#: Beta prior on P(LLM better | it disagrees with the rule): a skeptical one (mean 1/3) worth
#: three judged disagreements, so a model must win clearly more often than it loses to be trusted.
PRIOR_BETTER = 1.0
PRIOR_WORSE = 2.0
#: The LLM's answer replaces the rule's only where it wins more than it loses (gain = loss), and
#: by this margin, which pays for the latency of a call.
ASK_MARGIN = 0.05
#: Exploration: the share of steps on which the LLM is asked anyway (its answer is judged, not
#: acted on). It is worth asking only while the model may still turn out better than the rule, so
#: the rate is EXPLORE_RATE scaled by P(p_better > 1/2 | credit) relative to the prior's: a
#: model that keeps losing its disagreements is asked less and less (after 4 losses and no win,
#: 1/16 of the rate), never below EXPLORE_FLOOR, so a model can still earn trust; one that wins
#: them keeps the full rate until SETTLED_AFTER judged disagreements, then EXPLORE_RATE_SETTLED.
EXPLORE_RATE = 0.08
EXPLORE_FLOOR = 0.005
EXPLORE_RATE_SETTLED = 0.02
SETTLED_AFTER = 40
#: A call teaches something only when its answer is judged (it disagrees with the rule and one of
#: the two is better): a model that mostly agrees with the rule or ties with it costs a call per
#: step and earns no record. The rate scales by the model's share of calls judged, against
#: DISAGREE_REF (a prior worth DISAGREE_PRIOR_CALLS calls at that share), never above the full
#: rate (docs/design-decisions.md, "Numbers behind the constants").
DISAGREE_REF = 0.25
DISAGREE_PRIOR_CALLS = 4
#: Where the exploration calls go within an episode. Before the first flag, while the rule reads
#: the starting accounts (the choice that decides an episode), a step is EXPLORE_BEFORE_FIRST_FLAG
#: times as likely to be explored, for a model not behind the rule (`report_weight`). Once the
#: model has proposed to submit, no step is: the rule goes on, every later answer says submit
#: again, and a winning submit is judged a tie. Judged calls are what build trust, and they
#: cluster before the first flag (docs/design-decisions.md, "Numbers behind the constants").
EXPLORE_BEFORE_FIRST_FLAG = 4.0
#: A record already likely better than the rule (`chance_better` ≥ STAKE_CONFIDENCE) but not yet
#: trusted explores up to this share: the sooner it is judged, the sooner it decides.
EXPLORE_RATE_PROMISING = 0.25
#: The stake: in one episode the LLM may be trusted to decide (asked, and its answer acted on) at
#: most STAKE_PER_NET_WIN times per disagreement it has won *net* of those it lost, and only
#: once its record makes it likely better than the rule (`chance_better` ≥ STAKE_CONFIDENCE);
#: otherwise STAKE_MIN times. The credit is an estimate, and one episode must not bet far more
#: on it than the evidence behind it. Every trusted call is the bet (most trusted answers of a
#: near-even model agree with the rule and cost a call for nothing), so every trusted call
#: counts, not only overrules. A model that keeps winning gets a stake that grows with its
#: record, so a good one is slowed, not capped (docs/design-decisions.md, "Numbers behind the
#: constants").
STAKE_PER_NET_WIN = 2
STAKE_MIN = 4
STAKE_CONFIDENCE = 0.9
#: Trust that is earned, not capped: once the record makes the LLM better than the rule beyond
#: reasonable doubt (`chance_better` ≥ TRUST_CONFIDENCE, at least TRUST_MIN_NET disagreements won
#: net of those lost), it decides wherever the rule is not near-certain (α = ALPHA_TRUSTED, above
#: the task's cap) with no stake. The stake and the cap bound a model whose record is still an
#: estimate; a record like that is no longer one, and bounding it kept a good model from paying
#: (docs/design-decisions.md, "Numbers behind the constants").
TRUST_CONFIDENCE = 0.99
TRUST_MIN_NET = 8
ALPHA_TRUSTED = 0.99


@dataclass(frozen=True)
class Credit:
    """Judged disagreements of a task's LLM with its rule engine."""

    better: int = 0
    worse: int = 0
    ties: int = 0
    calls: int = 0  # LLM calls of the episodes judged (agreements included)

    @property
    def judged(self) -> int:
        return self.better + self.worse

    @property
    def p_better(self) -> float:
        """Posterior mean of P(LLM better | it disagrees), Beta prior."""
        return (self.better + PRIOR_BETTER) / (self.judged + PRIOR_BETTER + PRIOR_WORSE)

    @property
    def judged_share(self) -> float:
        """Share of calls whose answer was judged, shrunk toward DISAGREE_REF."""
        calls = max(self.calls, self.judged + self.ties)
        prior = DISAGREE_PRIOR_CALLS
        return (self.judged + DISAGREE_REF * prior) / (calls + prior)

    def __add__(self, other: Credit) -> Credit:
        return Credit(
            self.better + other.better,
            self.worse + other.worse,
            self.ties + other.ties,
            self.calls + other.calls,
        )


def action_value(
    action: str,
    ring: set[str],
    flagged: set[str],
    win_recall: float,
    pivot_new_members: int | None = None,
) -> float:
    """How good `action` is given the truth (higher is better); only differences matter.

    flag a member +1 / an innocent −1; unflag an innocent +1 / a member −1; inspect (or
    investigate) a member +0.5 / an innocent −0.5; submit +1 if the flags at that moment reach
    the task's recall with no innocent flagged, else −1 (premature or wrong). A pivot, when the
    caller knows how many members not yet visible its page holds (`pivot_new_members`: the
    expert reads it from the network): 0.3 per member up to 0.9 (a page of two or more new
    members beats inspecting one; never a right flag), −0.5 for none (a step spent on a
    crowd); otherwise judged like inspecting its source: from a member +0.5, else −0.5.
    """
    kind, account = parse_action(action)
    if kind == "pivot":
        if pivot_new_members is not None:
            return min(0.9, 0.3 * pivot_new_members) if pivot_new_members > 0 else -0.5
        return 0.5 if account in ring else -0.5
    if kind == "flag":
        return 1.0 if account in ring else -1.0
    if kind == "unflag":
        return -1.0 if account in ring else 1.0
    if kind in ("inspect", "investigate"):
        return 0.5 if account in ring else -0.5
    if kind == "submit":
        hits = len(flagged & ring)
        recall = hits / len(ring) if ring else 1.0
        return 1.0 if recall >= win_recall and hits == len(flagged) else -1.0
    return 0.0


def judge_steps(
    steps: Iterable[dict],
    ring: set[str],
    win_recall: float,
    won: bool,
    pivots: Iterable[Any] | None = None,
) -> Credit:
    """Credit of one episode from its step rows (action, rule_action, llm_status, llm_action).

    `pivots` (the terminal observation's) give each pivot that was run its page: such a pivot
    is valued by the ring members on its page not inspected yet at the step judged. A pivot that
    was never run has no page to judge it by, so a disagreement over one is a tie. Valued like
    inspecting its source instead, a pivot from a member on a trace that returns nothing new would
    beat every inspection of an innocent, and a model that rightly skips such pivots would lose
    its trust. A pivot never run is a tie rather than valued by its trace's expected yield, which
    did worse (docs/design-decisions.md, "Numbers behind the constants").

    The flagged set is replayed from the applied actions, so a submit is judged against the
    flags that were in place when it was proposed. A disagreement in which one side is a
    *winning* submit is judged by the episode's outcome, once per episode: if the episode was
    won anyway, going on did no harm (a tie); if it was lost, the submit was better. Otherwise a
    model that says "submit" once the flags suffice would earn a win at every later step of a
    won episode without ever being acted on (docs/design-decisions.md, "Numbers behind the
    constants").
    """
    pages = _pivot_pages(pivots or ())
    flagged: set[str] = set()
    inspected: set[str] = set()
    better = worse = ties = 0
    submit_judged = False
    for s in steps:
        llm_action = s.get("llm_action") if s.get("llm_status") == "ok" else None
        rule_action = s["rule_action"]
        if llm_action and llm_action != rule_action:
            llm_v, rule_v = (
                _value(a, ring, flagged, inspected, win_recall, pages)
                for a in (llm_action, rule_action)
            )
            unjudged = llm_v is None or rule_v is None  # a pivot never run: no page to judge by
            winning_submit = not unjudged and any(
                parse_action(a)[0] == "submit" and v > 0
                for a, v in ((llm_action, llm_v), (rule_action, rule_v))
            )
            if unjudged or (winning_submit and (won or submit_judged)):
                ties += 1
            elif llm_v > rule_v:
                better += 1
            elif llm_v < rule_v:
                worse += 1
            else:
                ties += 1
            submit_judged = submit_judged or winning_submit
        kind, account, _ = parse_step(s["action"])
        _replay(kind, account, flagged, inspected)
    return Credit(better, worse, ties)


def _pivot_pages(pivots: Iterable[Any]) -> dict[tuple[str, str], list[str]]:
    """(source, trace) -> the page of each pivot run in the episode."""
    pages = {}
    for p in pivots:
        p = p if isinstance(p, dict) else p.model_dump()
        pages[(p["account_id"], p["trace"])] = list(p["account_ids"])
    return pages


def _value(
    action: str,
    ring: set[str],
    flagged: set[str],
    inspected: set[str],
    win_recall: float,
    pages: dict[tuple[str, str], list[str]],
) -> float | None:
    """`action_value`, a pivot by its page (None: a pivot that was never run)."""
    kind, account, trace = parse_step(action)
    if kind != "pivot":
        return action_value(action, ring, flagged, win_recall)
    page = pages.get((account or "", trace or ""))
    if page is None:
        return None
    new = page_new_members(page, ring, inspected, account or "")
    return action_value(action, ring, flagged, win_recall, pivot_new_members=new)


def page_new_members(page: Iterable[str], ring: set[str], inspected: set[str], source: str) -> int:
    """What a pivot's page is worth to the judge: ring members on it not inspected yet, the
    source left out (the expert's oracle counts the same way)."""
    return sum(a in ring and a not in inspected and a != source for a in page)


def _replay(kind: str, account: str | None, flagged: set[str], inspected: set[str]) -> None:
    """Apply one taken action to the flags and inspections replayed so far."""
    if not account:
        return
    if kind == "flag":
        flagged.add(account)
    elif kind == "unflag":
        flagged.discard(account)
    elif kind == "inspect":
        inspected.add(account)


def credit_alpha(task: str, credit: Credit) -> float:
    """α from credit: the floor until the LLM wins more than half its disagreements, then rising
    linearly to the task's cap as P(better) goes from 0.5 to 1; ALPHA_TRUSTED once `trusted`."""
    if trusted(credit):
        return ALPHA_TRUSTED
    cap = ALPHA_CAPS.get(task, DEFAULT_CAP)
    trust = max(0.0, min(1.0, (credit.p_better - 0.5) / 0.5))
    return round(ALPHA_FLOOR + (cap - ALPHA_FLOOR) * trust, 3)


def expected_gain(credit: Credit) -> float:
    """Expected value of acting on a disagreeing LLM answer (gain 1 if better, loss 1 if worse)."""
    return credit.p_better - (1.0 - credit.p_better)


def chance_better(credit: Credit) -> float:
    """P(p_better > 1/2) under the Beta posterior: the chance the LLM beats the rule more often
    than not. Exact for integer Beta parameters: P(Beta(a, b) > x) = P(Binomial(a+b-1, x) < a)."""
    a, b = credit.better + PRIOR_BETTER, credit.worse + PRIOR_WORSE
    if not (float(a).is_integer() and float(b).is_integer()):
        raise ValueError("chance_better needs an integer Beta prior")
    n = int(a + b) - 1
    return sum(math.comb(n, k) for k in range(int(a))) / 2**n


def explore_rate(credit: Credit, every_task: Credit | None = None) -> float:
    """The exploration share of steps for the next episode: EXPLORE_RATE scaled by the promise
    of the record and by how often a call gets judged (see EXPLORE_RATE, DISAGREE_REF), capped
    by EXPLORE_RATE, EXPLORE_RATE_PROMISING or EXPLORE_RATE_SETTLED.

    `every_task` (default: the task's own `credit`) is the model's record over every task, which
    both scalings read: how a model does against the rule, and how often it disagrees at all,
    are traits of the model, so a curriculum's medium round need not learn again what easy
    showed. The cap (settled, promising) and everything else of the credit rule stay per task.
    """
    model = credit if every_task is None else every_task
    if credit.judged >= SETTLED_AFTER:
        cap = EXPLORE_RATE_SETTLED
    elif chance_better(credit) >= STAKE_CONFIDENCE:
        cap = EXPLORE_RATE_PROMISING
    else:
        cap = EXPLORE_RATE
    promise = chance_better(model) / chance_better(Credit())
    informative = min(1.0, model.judged_share / DISAGREE_REF)
    return round(max(EXPLORE_FLOOR, min(cap, EXPLORE_RATE * promise * informative)), 4)


def report_weight(model: Credit) -> float:
    """The weight of a step before the first flag for the next episode: EXPLORE_BEFORE_FIRST_FLAG
    while the model (its record over every task) has won at least as many judged disagreements
    as it lost, else 1: a model behind the rule gains nothing from being judged sooner."""
    return EXPLORE_BEFORE_FIRST_FLAG if model.better >= model.worse else 1.0


def exploration_weight(flagged: int, said_submit: bool, before_first_flag: float) -> float:
    """How much likelier than the episode's exploration rate this step is to be explored:
    `before_first_flag` (the pinned `report_weight`) while nothing is flagged, 0 once the model
    proposed to submit in the episode (`said_submit`), else 1."""
    if said_submit:
        return 0.0
    return before_first_flag if flagged == 0 else 1.0


def trusted(credit: Credit) -> bool:
    """The record shows the LLM better than the rule beyond reasonable doubt (TRUST_CONFIDENCE)."""
    return (
        credit.better - credit.worse >= TRUST_MIN_NET and chance_better(credit) >= TRUST_CONFIDENCE
    )


def stake(credit: Credit) -> int | None:
    """How many trusted calls the LLM gets in the next episode (see STAKE_PER_NET_WIN); None (no
    bound) once `trusted`."""
    if trusted(credit):
        return None
    if chance_better(credit) < STAKE_CONFIDENCE:
        return STAKE_MIN
    return max(STAKE_MIN, STAKE_PER_NET_WIN * (credit.better - credit.worse))


class Ask(NamedTuple):
    """`should_ask`'s answer: call the LLM?, is the call a shadow (judged, never acted on)?, why."""

    ask: bool
    shadow: bool
    why: str


def should_ask(
    rule_confidence: float,
    alpha: float,
    gain: float,
    rate: float,
    episode_key: str,
    index: int,
    stake_left: int | None = None,
) -> Ask:
    """Whether to call the LLM at this step, and why (deterministic per thread and step).

    Asked to decide while the rule is unsure (confidence < α), the LLM's expected gain (pinned at
    the episode's start, like α) is positive and its stake for the episode is not spent (None:
    no stake, the original script's rule; `stake_left` counts trusted calls, not overrules);
    otherwise asked only on an exploration share `rate` of the steps, as a shadow: its answer is
    judged after the debrief, never acted on.
    """
    trusted = rule_confidence < alpha and gain > ASK_MARGIN
    if trusted and (stake_left is None or stake_left > 0):
        why = f"rule confidence {rule_confidence:.2f} < α {alpha:.2f}, gain {gain:+.2f}"
        return Ask(True, False, why)
    digest = hashlib.sha256(f"explore\x00{episode_key}\x00{index}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < rate:
        return Ask(True, True, f"exploration call ({rate:.0%} of steps; judged, not acted on)")
    if trusted:
        return Ask(False, False, "the LLM's stake for this episode is spent")
    if rule_confidence < alpha:
        return Ask(False, False, f"LLM not worth asking: expected gain {gain:+.2f}")
    return Ask(False, False, f"rule confidence {rule_confidence:.2f} ≥ α {alpha:.2f}")
