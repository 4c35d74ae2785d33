"""The ring operator's playbook: generations, `mixed`, and campaigns of rounds.

A `Playbook` is a set of channel strengths in [0, 1] applied on top of a task's generator knobs
(`fakegang_env/playbook.py` applies it). 1.0 is the task as it always was (`classic` is all
ones, and generates today's networks bit for bit); lower values move the ring toward what a real
operator does instead of the blatant version (see ../shared/design/CAMPAIGNS.md):

    creation_burst     ages within days        -> bought aged accounts, ages like real users
    posting_sync       one shared hour         -> schedulers with per-account jitter
    content_reuse      templates, reused media -> unique generated faces and text
    shared_proxies     a small proxy pool      -> residential proxies (one IP each), carrier NAT
    ring_density       dense mutual follows    -> loose cells, few intra-ring links
    lockstep_cofollow  all follow the customers-> staggered, partial co-follows
    camouflage         little                  -> many camouflage follows, follow-backs
    renames            rename history stands out -> name-change counts like ordinary users
    evasion            the task's adaptation   -> stronger mid-episode adaptation

Everything here is a pure function of its arguments: a `mixed` playbook of a seed, a campaign's
regimes and every round's seed and playbook are derived from string-seeded `random.Random`s and
SHA-256, never from global state.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from fakegang_env.tasks import get_task

__all__ = [
    "ADAPTIVE",
    "ADAPTIVE_NOTE",
    "CAMPAIGN_TACTICS",
    "CHANNELS",
    "CLASSIC",
    "GENERATIONS",
    "GENERATION_NOTES",
    "MIXED",
    "TACTICS_NAMES",
    "Playbook",
    "RoundSpec",
    "UnknownTacticsError",
    "campaign_round",
    "campaign_schedule",
    "mixed_playbook",
    "resolve_playbook",
    "round_seed",
    "tactics_catalog",
]

CHANNELS: tuple[str, ...] = (
    "creation_burst",
    "posting_sync",
    "content_reuse",
    "shared_proxies",
    "ring_density",
    "lockstep_cofollow",
    "camouflage",
    "renames",
    "evasion",
)

MIXED = "mixed"
#: Campaign rounds whose operator reads the takedowns (fakegang_env/operator.py); campaigns only.
ADAPTIVE = "adaptive"
REGIME_ROUNDS = (3, 6)  # a regime lasts a seeded number of rounds in this inclusive range
#: The last round index of a campaign (1,000 rounds). Regime lengths are drawn in order up to the
#: round asked for, so an unbounded index would let one request spin the server for hours.
MAX_ROUND = 999
_SEED_BYTES = 7  # derived seeds stay below 2**56 (the server accepts up to 2**63 - 1)


class UnknownTacticsError(ValueError):
    """A tactics name that is not a generation nor `mixed`; the message lists the valid ones."""


@dataclass(frozen=True)
class Playbook:
    """A named set of channel strengths, each in [0, 1] (1 = the task's classic strength)."""

    name: str
    channels: dict[str, float] = field(hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"playbook name must be a non-empty string, got {self.name!r}")
        missing = [c for c in CHANNELS if c not in self.channels]
        extra = sorted(set(self.channels) - set(CHANNELS))
        if missing or extra:
            raise ValueError(
                f"playbook {self.name!r} must set exactly the channels {', '.join(CHANNELS)}"
                f" (missing: {missing or 'none'}; unknown: {extra or 'none'})"
            )
        for name, value in self.channels.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"channel {name} must be a number in [0, 1], got {value!r}")
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"channel {name} must be in [0, 1], got {value}")
        # a canonical, immutable-by-convention copy in CHANNELS order
        object.__setattr__(self, "channels", {c: float(self.channels[c]) for c in CHANNELS})

    @property
    def is_classic(self) -> bool:
        """All channels at full strength: the generator's untouched output."""
        return all(v == 1.0 for v in self.channels.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: `{"name": ..., "channels": {channel: strength}}`."""
        return {"name": self.name, "channels": dict(self.channels)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Playbook:
        return cls(name=data["name"], channels=dict(data["channels"]))


def _playbook(name: str, **weak: float) -> Playbook:
    return Playbook(name, {c: weak.get(c, 1.0) for c in CHANNELS})


CLASSIC = _playbook("classic")

#: Named generations: each weakens two or three channels; the others still carry evidence.
GENERATIONS: dict[str, Playbook] = {
    "classic": CLASSIC,
    "aged_accounts": _playbook("aged_accounts", creation_burst=0.0, renames=0.2),
    "residential_proxies": _playbook("residential_proxies", shared_proxies=0.0, posting_sync=0.2),
    "crafted_content": _playbook("crafted_content", content_reuse=0.3, renames=0.3),
    "loose_cells": _playbook("loose_cells", ring_density=0.3, lockstep_cofollow=0.5),
    "heavy_camouflage": _playbook("heavy_camouflage", camouflage=0.0, lockstep_cofollow=0.5),
    # built against pivots: no shared IP block, photo, bio or scheduler left to search by
    "diversified": _playbook(
        "diversified", shared_proxies=0.0, content_reuse=0.0, posting_sync=0.2
    ),
}

#: One line per generation on what it changes (for `/tasks` and `fakegang env tactics`).
GENERATION_NOTES: dict[str, str] = {
    "classic": "the task's own ring: every channel at full strength (today's generator)",
    "aged_accounts": "bought aged accounts: ages spread like real users', ordinary rename "
    "histories",
    "residential_proxies": "one residential IP or carrier NAT per member, schedulers jitter the "
    "posting hour",
    "crafted_content": "unique generated photos, bios and comments; ordinary rename histories",
    "loose_cells": "loose cells with few intra-ring follows, staggered partial co-follows",
    "heavy_camouflage": "many follows of celebrities and ordinary users with follow-backs, "
    "partial co-follows",
    "diversified": "against pivots: own residential IP, stock photo, generic bio and schedule "
    "per member",
    MIXED: "a playbook drawn per seed: two to four channels weakened by random amounts",
}
ADAPTIVE_NOTE = (
    "campaigns only: after each round the operator reads its takedown list and weakens what got "
    "its members caught, within an evasion budget (the playbook is revealed in the debrief)"
)

#: Tactics an episode of a seed can play (and every campaign round).
TACTICS_NAMES: tuple[str, ...] = (*GENERATIONS, MIXED)
#: Tactics a campaign can play: the per-seed ones and the adaptive operator.
CAMPAIGN_TACTICS: tuple[str, ...] = (*TACTICS_NAMES, ADAPTIVE)


def tactics_catalog() -> list[dict[str, Any]]:
    """Every tactics name with its one-line note, channel strengths and what it does to each
    pivot trace (the strength of the trace's channel: 1 = the ring shares it, 0 = members sit on
    ordinary users' values); None for `mixed`, whose strengths are drawn per seed.

    A named generation's strengths are public (a client picks it by name); what stays hidden is
    which playbook a campaign round or a `mixed` seed plays.
    """
    from fakegang_env.traces import trace_strengths  # traces.py type-hints Playbook from here

    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "description": GENERATION_NOTES[name],
            "channels": dict(pb.channels),
            "traces": trace_strengths(pb),
        }
        for name, pb in GENERATIONS.items()
    ]
    rows.append(
        {"name": MIXED, "description": GENERATION_NOTES[MIXED], "channels": None, "traces": None}
    )
    rows.append({"name": ADAPTIVE, "description": ADAPTIVE_NOTE, "channels": None, "traces": None})
    return rows


def _check_task(task: str) -> str:
    return get_task(task).name  # raises UnknownTaskError naming the valid tasks


def _check_index(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return value


def _check_tactics(tactics: Any) -> str:
    if tactics == ADAPTIVE:
        raise UnknownTacticsError(
            "adaptive rounds depend on the takedowns of the rounds before: play them as a "
            "campaign (reset with campaign, round and the previous round's operator_token)"
        )
    if tactics not in TACTICS_NAMES:
        raise UnknownTacticsError(f"unknown tactics {tactics!r}; valid: {', '.join(TACTICS_NAMES)}")
    return tactics


def mixed_playbook(key: str) -> Playbook:
    """A `mixed` playbook drawn from `key`: 2-4 channels weakened to [0, 0.5], the rest kept
    in [0.75, 1]. Every key gives its own mix, so unseen seeds give unseen mixes."""
    rng = random.Random(f"mixed:{key}")
    weak = set(rng.sample(CHANNELS, rng.randint(2, 4)))
    strengths = {}
    for c in CHANNELS:  # one draw per channel in a fixed order, weak or not
        u = rng.random()
        strengths[c] = round(0.5 * u if c in weak else 0.75 + 0.25 * u, 3)
    return Playbook(MIXED, strengths)


def resolve_playbook(task: str, seed: int, tactics: str = "classic") -> Playbook:
    """The playbook an episode of `(task, seed)` plays under `tactics` (`mixed` draws per seed)."""
    task = _check_task(task)
    seed = _check_index("seed", seed)
    tactics = _check_tactics(tactics)
    if tactics == MIXED:
        return mixed_playbook(f"{task}:{seed}")
    return GENERATIONS[tactics]


@dataclass(frozen=True)
class RoundSpec:
    """One round of a campaign: its derived network seed, its regime and the hidden playbook."""

    round: int
    seed: int
    regime: int
    playbook: Playbook

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "seed": self.seed,
            "regime": self.regime,
            "playbook": self.playbook.to_dict(),
        }


def round_seed(task: str, campaign: int, k: int) -> int:
    """The network seed of round k of a campaign (whatever its tactics)."""
    digest = hashlib.sha256(f"campaign:{task}:{campaign}:round:{k}".encode()).digest()
    return int.from_bytes(digest[:_SEED_BYTES], "big")


def _regime_of(task: str, campaign: int, k: int) -> int:
    """Index of the regime that round k falls in; regime lengths are drawn in order."""
    rng = random.Random(f"campaign:{task}:{campaign}:regimes")
    end, regime = 0, 0
    while True:
        end += rng.randint(*REGIME_ROUNDS)
        if k < end:
            return regime
        regime += 1


def _regime_playbook(task: str, campaign: int, regime: int, tactics: str) -> Playbook:
    if tactics == MIXED:
        return mixed_playbook(f"campaign:{task}:{campaign}:regime:{regime}")
    if tactics == "classic" or regime % 2 == 1:
        return CLASSIC
    return GENERATIONS[tactics]


def campaign_round(task: str, campaign: int, round: int, tactics: str = MIXED) -> RoundSpec:
    """Round `round` of campaign `campaign`: a pure function of (task, campaign, round, tactics).

    `mixed`: every regime draws a new mixed playbook. A named generation G: regimes alternate
    G, classic, G, ... `classic`: every round is classic.
    """
    task = _check_task(task)
    campaign = _check_index("campaign", campaign)
    k = _check_index("round", round)
    if k > MAX_ROUND:
        raise ValueError(f"round must be at most {MAX_ROUND} (1,000 rounds per campaign), got {k}")
    tactics = _check_tactics(tactics)
    regime = _regime_of(task, campaign, k)
    return RoundSpec(
        round=k,
        seed=round_seed(task, campaign, k),
        regime=regime,
        playbook=_regime_playbook(task, campaign, regime, tactics),
    )


def campaign_schedule(
    task: str, campaign: int, n_rounds: int, tactics: str = MIXED
) -> list[RoundSpec]:
    """Rounds 0..n_rounds-1 of a campaign (each equal to `campaign_round` of its index)."""
    n_rounds = _check_index("n_rounds", n_rounds)
    if n_rounds > MAX_ROUND + 1:
        raise ValueError(f"n_rounds must be at most {MAX_ROUND + 1}, got {n_rounds}")
    return [campaign_round(task, campaign, k, tactics) for k in range(n_rounds)]
