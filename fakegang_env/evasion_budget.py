"""What an adaptive operator pays to weaken a channel, and the budget it may spend per round.

One table, one place: `COSTS` gives each channel the operator controls its price for going from
the blatant ring (strength 1) to the fully hidden one (strength 0), with why it costs that; a
channel at strength s costs `cost * (1 - s)`. `BUDGET` is just under half the price of hiding
everything, so every playbook the operator can afford still leaves most channels carrying
evidence. It is a little more than the dearest named generation (`diversified`) spends: at that
spend the few playbooks that blind a fixed detector sit too close together for ten rounds of
takedowns to find them (docs/design-decisions.md, "An evasion budget of just under half").

`evasion` (the ring's mid-episode adaptation) is not for sale: it is the task's own behaviour, and
the adaptive operator plays it at full strength like every named generation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fakegang_env.tactics import CHANNELS

__all__ = ["BUDGET", "COSTS", "FIXED_CHANNELS", "SPENDABLE", "ChannelCost", "cost", "fits"]


@dataclass(frozen=True)
class ChannelCost:
    """The price of weakening one channel fully, and the one-line reason for it."""

    cost: float
    reason: str


COSTS: dict[str, ChannelCost] = {
    "creation_burst": ChannelCost(1.0, "aged accounts are bought one by one, at a premium"),
    "shared_proxies": ChannelCost(1.0, "a residential IP per member is rented every month"),
    "content_reuse": ChannelCost(0.9, "a unique face, bio and comments per member take work"),
    "lockstep_cofollow": ChannelCost(0.8, "staggered, partial co-follows deliver less to buyers"),
    "ring_density": ChannelCost(0.6, "loose cells amplify each other less"),
    "camouflage": ChannelCost(0.5, "camouflage follows take time and get follow-backs wrong"),
    "posting_sync": ChannelCost(0.3, "scheduler jitter is a setting"),
    "renames": ChannelCost(0.2, "keeping a name costs nothing but reuse of old accounts"),
}
#: Channels the operator never changes (played at strength 1).
FIXED_CHANNELS: tuple[str, ...] = tuple(c for c in CHANNELS if c not in COSTS)
#: The channels the operator may weaken, in `CHANNELS` order.
SPENDABLE: tuple[str, ...] = tuple(c for c in CHANNELS if c in COSTS)
#: What one round's playbook may cost: just under half of hiding every channel (5.3).
BUDGET = 2.6


def cost(channels: Mapping[str, float]) -> float:
    """What a playbook's channel strengths cost under `COSTS` (fixed channels are free)."""
    return round(sum(COSTS[c].cost * (1.0 - channels[c]) for c in SPENDABLE), 6)


def fits(channels: Mapping[str, float]) -> bool:
    """Whether a playbook is within the budget and leaves the fixed channels untouched."""
    return cost(channels) <= BUDGET + 1e-9 and all(channels[c] == 1.0 for c in FIXED_CHANNELS)
