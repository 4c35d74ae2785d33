"""The adaptive ring operator: it reads its takedown list and changes what got its accounts caught.

A campaign of `tactics=adaptive` opens with a playbook drawn from the campaign seed (one or two
channels weakened, a fifth to two fifths of the budget). After each round the operator sees only
which of its members were flagged when the round ended (its takedown list) and picks the next
round's playbook by a survival-driven local search, in the spirit of the evolved-spambot work
(Cresci et al. 2019):

- **Don't fix what works.** When at least `KEEP_SURVIVAL` of the members survived, the operator
  plays the same playbook again.
- **Mutate away from what was caught.** Otherwise the move weakens the channel whose tell the
  caught members showed most, compared with the survivors (fakegang_env/takedowns.py): "9 of 12
  caught members shared an IP block (2 of 8 survivors)". Where tells tie (every member caught,
  every tell on all of them), the channel whose weakness bought the most survival so far wins,
  an untried one counting as promising. One move in `EXPLORE_EVERY` probes a random channel
  instead, so a blind comparison (a random investigator) does not steer it.
- **Pay for it, with what protected least.** Under the evasion budget
  (fakegang_env/evasion_budget.py) a move over budget restores another weakened channel: the one
  whose weakness bought the least survival so far (mean survival of the rounds it was weak,
  against the rounds it was strong: a bandit's running credit per channel).
- **Spend what is left.** Budget a move leaves unspent goes on further channels, the most
  betraying first, until no other fits: money kept back protects nobody, and a playbook with
  room to spare is one a fixed detector still reads
  (docs/design-decisions.md, "An operator who spends its budget").

A single round's survival is a noisy signal (one network, one investigation), so the search keeps
no "best playbook" to return to: the per-channel credit pools every round instead.

Everything is a pure function of (task, campaign, the takedown lists): the random draws come from
`random.Random` seeded by the campaign and the round's takedown list, so the same takedowns give
the same playbooks, and a fork that takes down other members starts another branch.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from fakegang_env.evasion_budget import BUDGET, SPENDABLE, cost, fits
from fakegang_env.network import Network
from fakegang_env.tactics import ADAPTIVE, CHANNELS, Playbook
from fakegang_env.takedowns import exposure

__all__ = [
    "ADAPTIVE",
    "OperatorState",
    "RoundReport",
    "after_round",
    "opening",
]

#: One move lowers a channel's strength by this much (floored at 0); a restore raises it as much.
STEP = 1.0
#: Survival at or above which the operator plays the same playbook again.
KEEP_SURVIVAL = 0.5
#: One move in this many probes a random channel (seeded) instead of the most betraying one.
EXPLORE_EVERY = 6
#: The credit assumed for a channel never tried weak (optimism in the face of uncertainty).
UNTRIED = 0.25
#: Levels the opening playbook draws a channel's strength from.
OPENING_LEVELS = (0.0, 0.4)
#: The opening spends between these shares of the budget: one or two channels, so the operator
#: starts where a fixed detector still wins and finds out what to hide from the takedowns.
OPENING_SPEND = (0.2, 0.45)


def _label(channel: str) -> str:
    return channel.replace("_", " ")


def _lowered(level: float) -> float:
    """A channel's strength after one move weakens it."""
    return round(max(0.0, level - STEP), 4)


def _change(channel: str, before: float, after: float) -> str:
    """'renames 1.00→0.00': one channel's change, as a move's line says it."""
    return f"{_label(channel)} {before:.2f}→{after:.2f}"


def _rounded(channels: Mapping[str, float]) -> dict[str, float]:
    return {c: round(float(channels[c]), 4) for c in CHANNELS}


@dataclass(frozen=True)
class OperatorState:
    """What the operator knows before a round: the playbook it plays, why, and its search memory.

    `survival[channel]` holds [sum of survival over rounds the channel was weak, such rounds,
    sum over rounds it was strong, such rounds]: what restoring a channel risks."""

    task: str
    campaign: int
    round: int
    playbook: dict[str, float]
    reason: str
    move: str | None = None  # the channel this round's move weakened (None: opening or kept)
    survival: dict[str, list[float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OperatorState:
        """The inverse of `to_dict`; raises ValueError (with the reason) on a malformed state."""
        try:
            state = cls(**data)
            Playbook(ADAPTIVE, state.playbook)  # every channel in [0, 1]
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"malformed operator state: {exc}") from None
        return state

    def as_playbook(self) -> Playbook:
        return Playbook(ADAPTIVE, self.playbook)


@dataclass(frozen=True)
class RoundReport:
    """The operator's side of a round, revealed in the debrief once the round has ended."""

    round: int
    playbook: dict[str, float]
    cost: float
    members: int
    caught: int
    survival: float
    reason: str
    move: str | None  # the channel the operator weakened for this round (None: opening or kept)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _draw(*parts: Any) -> random.Random:
    return random.Random(":".join(str(p) for p in ("operator", *parts)))


def opening(task: str, campaign: int) -> OperatorState:
    """Round 0: channels weakened in a seeded order until a fifth of the budget is spent."""
    rng = _draw(task, campaign, "opening")
    order = list(SPENDABLE)
    rng.shuffle(order)
    channels = dict.fromkeys(CHANNELS, 1.0)
    weakened = []
    for c in order:
        level = rng.choice(OPENING_LEVELS)
        trial = {**channels, c: level}
        if cost(trial) > OPENING_SPEND[1] * BUDGET:
            continue
        channels, weakened = trial, [*weakened, f"{_label(c)} {level:.1f}"]
        if cost(channels) >= OPENING_SPEND[0] * BUDGET:
            break
    return OperatorState(
        task=task,
        campaign=campaign,
        round=0,
        playbook=_rounded(channels),
        reason=f"opening playbook drawn from the campaign seed: {', '.join(weakened)}",
    )


def _protection(stats: Mapping[str, list[float]], channel: str) -> float:
    weak_sum, weak_n, strong_sum, strong_n = stats.get(channel, [0.0, 0, 0.0, 0])
    if not weak_n or not strong_n:
        return 0.0
    return weak_sum / weak_n - strong_sum / strong_n


def _promise(stats: Mapping[str, list[float]], channel: str) -> float:
    """What weakening `channel` further may buy: its credit so far, optimistic when untried."""
    weak_n, strong_n = stats.get(channel, [0.0, 0, 0.0, 0])[1::2]
    return _protection(stats, channel) if weak_n and strong_n else UNTRIED


def _record(stats: Mapping[str, list[float]], played: Mapping[str, float], survival: float):
    out = {c: list(v) for c, v in stats.items()}
    for c in SPENDABLE:
        row = out.setdefault(c, [0.0, 0, 0.0, 0])
        at = 0 if played[c] < 1.0 else 2
        row[at] = round(row[at] + survival, 4)
        row[at + 1] += 1
    return out


def after_round(
    state: OperatorState, net: Network, flagged: Collection[str]
) -> tuple[RoundReport, OperatorState]:
    """The round's report (what was played, survival, why) and the state of the next round."""
    members = list(net.gang_ids)
    taken = sorted(g for g in members if g in set(flagged))
    survival = round(1.0 - len(taken) / len(members), 4) if members else 1.0
    report = RoundReport(
        round=state.round,
        playbook=dict(state.playbook),
        cost=cost(state.playbook),
        members=len(members),
        caught=len(taken),
        survival=survival,
        reason=state.reason,
        move=state.move,
    )
    stats = _record(state.survival, state.playbook, survival)
    played = dict(state.playbook)
    survived = len(members) - len(taken)
    if survival >= KEEP_SURVIVAL:
        why = f"kept the playbook: {survived} of {len(members)} members survived"
        return report, _next(state, played, f"{why} round {state.round + 1}", None, stats)

    digest = hashlib.sha256(",".join(taken).encode()).hexdigest()[:16]
    rng = _draw(state.task, state.campaign, "move", state.round, digest)
    tie = {c: rng.random() for c in SPENDABLE}  # one draw per channel, whatever is chosen
    probe = rng.randrange(EXPLORE_EVERY) == 0
    candidates = [c for c in SPENDABLE if played[c] > 0.0]
    exposed = exposure(net, taken)

    def rank(c: str) -> tuple[float, float, float]:
        """The most betraying channel first; then the most promising; then the seeded draw."""
        return (round(exposed[c].betrayal, 1), _promise(stats, c), tie[c])

    if probe:
        channel = candidates[int(tie[SPENDABLE[0]] * len(candidates))]
        why = f"a seeded random probe (1 move in {EXPLORE_EVERY})"
    else:
        channel = max(candidates, key=rank)
        why = exposed[channel].sentence()
    new = dict(played)
    new[channel] = _lowered(played[channel])
    parts = [f"weakened {_change(channel, played[channel], new[channel])}: {why}"]
    restored: dict[str, str] = {}
    while cost(new) > BUDGET:
        payers = [d for d in SPENDABLE if new[d] < 1.0 and d != channel]
        d = min(payers, key=lambda x: (round(_protection(stats, x), 6), tie[x]))
        before = new[d]
        new[d] = round(min(1.0, new[d] + STEP), 4)
        restored[d] = _change(d, before, new[d])
    if restored:
        parts.append(f"paid by restoring {', '.join(restored.values())}")
    spent = _spend_left(new, {channel, *restored}, rank)
    if spent:
        parts.append(f"spent what was left on {', '.join(spent)}")
    return report, _next(state, new, "; ".join(parts), channel, stats)


def _spend_left(
    playbook: dict[str, float], keep_out: Collection[str], rank: Callable[[str], Any]
) -> list[str]:
    """Weaken further channels (not `keep_out`: the move's own and those it restored to pay),
    best `rank` first, while one still fits the budget; `playbook` changes in place. Returns
    what was spent, as 'renames 1.00→0.00'."""
    spent = []
    while True:
        room = [
            c
            for c in SPENDABLE
            if playbook[c] > 0.0
            and c not in keep_out
            and fits({**playbook, c: _lowered(playbook[c])})
        ]
        if not room:
            return spent
        c = max(room, key=rank)
        before, playbook[c] = playbook[c], _lowered(playbook[c])
        spent.append(_change(c, before, playbook[c]))


def _next(
    state: OperatorState,
    playbook: Mapping[str, float],
    reason: str,
    move: str | None,
    stats: dict[str, list[float]],
) -> OperatorState:
    return OperatorState(
        task=state.task,
        campaign=state.campaign,
        round=state.round + 1,
        playbook=_rounded(playbook),
        reason=reason,
        move=move,
        survival=stats,
    )
