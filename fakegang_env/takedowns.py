"""What an operator can read from a takedown list: which traits its caught members had.

The operator sees which of its own accounts were flagged when a round ended, and of course knows
its own accounts. For each channel it controls it checks a *tell* on every member: the trait that
channel leaves (sharing an IP block with another member, a creation window, a schedule, a photo
or bio, dense follows among members, lockstep follows of the customers, little camouflage, a rename
history). Comparing how often caught and surviving members show a tell says which channel
betrayed them: "9 of 12 caught members shared an IP block (2 of 8 survivors)".

Pure functions of the finished network and the flagged ids; nothing here is random.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass

from fakegang_env.evasion_budget import SPENDABLE
from fakegang_env.network import Network

__all__ = ["TELLS", "Exposure", "exposure", "tells_of"]

#: A rename count from which a member looks like a reused account (ordinary users: 8 %).
RENAMES_TELL = 2
#: Fewer follows than this outside the ring and its customers: no camouflage to speak of.
CAMOUFLAGE_TELL = 5
#: Follows of at least this many other members: a dense cell.
DENSITY_TELL = 2
#: Following at least this share of the customers: lockstep co-follows.
COFOLLOW_TELL = 0.5


def _shares_trace(net: Network, trace: str) -> set[str]:
    """Members whose current value of `trace` another member shares."""
    if net.traces is None:
        return set()
    values = {g: net.traces.value(net, trace, g) for g in net.gang_ids}
    counts = Counter(values.values())
    return {g for g, v in values.items() if counts[v] > 1}


def _dense(net: Network) -> set[str]:
    ring = set(net.gang_ids)
    return {g for g in ring if sum(f in ring for f in net.accounts[g].follows) >= DENSITY_TELL}


def _cofollow(net: Network) -> set[str]:
    customers = {a for a, acc in net.accounts.items() if acc.role == "customer"}
    if not customers:
        return set()
    need = COFOLLOW_TELL * len(customers)
    return {g for g in net.gang_ids if sum(f in customers for f in net.accounts[g].follows) >= need}


def _bare(net: Network) -> set[str]:
    ring = set(net.gang_ids)
    customers = {a for a, acc in net.accounts.items() if acc.role == "customer"}
    return {
        g
        for g in ring
        if sum(f not in ring and f not in customers for f in net.accounts[g].follows)
        < CAMOUFLAGE_TELL
    }


def _renamed(net: Network) -> set[str]:
    return {g for g in net.gang_ids if net.accounts[g].name_change_count >= RENAMES_TELL}


@dataclass(frozen=True)
class Tell:
    """A channel's trait on a member: who shows it, and how to say so in a sentence."""

    phrase: str  # "... of 12 caught members <phrase>"
    members: Callable[[Network], set[str]]


TELLS: dict[str, Tell] = {
    "creation_burst": Tell(
        "were created in the same 14-day window as another member",
        lambda net: _shares_trace(net, "creation"),
    ),
    "posting_sync": Tell(
        "posted on a schedule another member used", lambda net: _shares_trace(net, "schedule")
    ),
    "content_reuse": Tell(
        "shared a photo or bio template with another member",
        lambda net: _shares_trace(net, "photo") | _shares_trace(net, "bio"),
    ),
    "shared_proxies": Tell(
        "shared an IP block with another member", lambda net: _shares_trace(net, "ip")
    ),
    "ring_density": Tell(f"followed {DENSITY_TELL} or more other members", _dense),
    "lockstep_cofollow": Tell("followed at least half of the customers", _cofollow),
    "camouflage": Tell(f"had fewer than {CAMOUFLAGE_TELL} camouflage follows", _bare),
    "renames": Tell(f"had been renamed {RENAMES_TELL} or more times", _renamed),
}
assert set(TELLS) == set(SPENDABLE), "every channel the operator controls needs a tell"


def tells_of(net: Network) -> dict[str, set[str]]:
    """Channel -> the members showing its tell in the network as it ended."""
    return {channel: tell.members(net) for channel, tell in TELLS.items()}


@dataclass(frozen=True)
class Exposure:
    """How often caught and surviving members showed one channel's tell."""

    channel: str
    caught: int  # caught members with the tell
    n_caught: int
    survived: int  # surviving members with the tell
    n_survived: int

    @property
    def betrayal(self) -> float:
        """How much more the caught showed the tell than the survivors (all caught: the share)."""
        share = self.caught / self.n_caught if self.n_caught else 0.0
        if not self.n_survived:
            return share
        return share - self.survived / self.n_survived

    def sentence(self) -> str:
        said = f"{self.caught} of {self.n_caught} caught members {TELLS[self.channel].phrase}"
        if self.n_survived:
            said += f" ({self.survived} of {self.n_survived} survivors)"
        return said


def exposure(net: Network, flagged: Collection[str]) -> dict[str, Exposure]:
    """Per channel, the tell among caught members against survivors (the takedown list is the
    members in `flagged`)."""
    flagged = set(flagged)
    caught = [g for g in net.gang_ids if g in flagged]
    survivors = [g for g in net.gang_ids if g not in flagged]
    out = {}
    for channel, showing in tells_of(net).items():
        out[channel] = Exposure(
            channel,
            sum(g in showing for g in caught),
            len(caught),
            sum(g in showing for g in survivors),
            len(survivors),
        )
    return out
