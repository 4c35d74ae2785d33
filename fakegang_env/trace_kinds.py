"""The shipped trace kinds: what each one is, and the function that draws its values.

A trace kind is one entry (`TraceKind`): its name, the operator channel it follows, the words
`/tasks`, the docs, the decision prompt and the learned insights use for it, and `build`, which
draws every account's value from a finished network. `fakegang_env/trace_catalogue.py` lists
the kinds; everything else iterates that list.

`build` gets its own random stream (`TraceBuild.rng`, seeded by the network and the kind's name),
so a kind's values depend on nothing but the network and its channel's strength: adding,
removing or reordering kinds moves no other kind's values.

Consistency with what INSPECT shows: `ip` is a function of `ip_cluster_id` (so an IP rotated by
evasion moves its account to another block), `creation` a function of `account_age_days`; a
member on the ring's photo, bio or schedule is one whose channel still reuses (a high
`photo_reuse_score` is a photo shared with others: meme pages share meme images, and accounts
with a reused-looking photo share stock photos). Mid-episode evasion moves the ring's scheduler
to new slots, as it shifts their posting hours together.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the network imports the traces; only for type hints here
    from fakegang_env.network import Network

__all__ = [
    "BIO",
    "CREATION",
    "CREATION_WINDOW_DAYS",
    "IP",
    "PHOTO",
    "SCHEDULE",
    "TraceBuild",
    "TraceKind",
    "TraceValues",
    "digest",
]

CREATION_WINDOW_DAYS = 14
_IPS_PER_BLOCK = 10  # ordinary blocks hold about this many IP labels
_STOCK_SHARE = 0.12  # ordinary accounts on a stock photo / generic bio without a high score
_REUSED_LOOK = 0.3  # a content score above this is a reused photo or templated bio
_SCHEDULER_SHARE = 0.2  # ordinary accounts posting through a scheduling app's default slots


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class TraceValues(Protocol):
    """Every account's value of one trace kind in one network (copied with the network)."""

    def value(self, net: Network, account_id: str) -> str: ...

    def copy(self) -> TraceValues: ...

    def evade(self, net: Network, k: int) -> None:
        """Evasion event k of the episode (most kinds follow the accounts' signals instead)."""
        ...


@dataclass(frozen=True)
class TraceBuild:
    """What a kind's `build` draws from: the finished network, its salt (`<task>:<seed>`), the
    strength of the kind's channel (1 = classic, 0 = members on ordinary values), the ring's
    proxy pool as the classic build drew it, and the kind's own random stream."""

    net: Network
    salt: str
    strength: float
    proxy_ips: frozenset[str]
    rng: random.Random


@dataclass(frozen=True)
class TraceKind:
    """One trace an investigator can pivot on; `build` draws its values (see module doc)."""

    name: str
    channel: str  # the operator's channel it follows (a weakened channel weakens the trace)
    note: str  # what it is (`GET /tasks`)
    prompt_note: str  # a few words for the decision prompt's trace list
    label: str  # the insight's subject: "<label> pivots now return crowds"
    crowd_reason: str  # why a member's pivot on it returns a crowd
    at_full_strength: str  # the docs: what the ring shares when its channel is at 1
    weakened: str  # the docs: where members sit when the channel is weakened
    build: Callable[[TraceBuild], TraceValues]
    detail: str = ""  # the docs' "what it is", when it says more than `note`


@dataclass
class StoredValues:
    """Values drawn once per account (photo hash, bio template)."""

    values: dict[str, str]

    def value(self, net: Network, account_id: str) -> str:
        return self.values[account_id]

    def copy(self) -> StoredValues:
        return StoredValues(dict(self.values))

    def evade(self, net: Network, k: int) -> None:
        return None


@dataclass
class SchedulerValues(StoredValues):
    """Posting-schedule fingerprints; evasion moves the ring's scheduler (and the members on it)
    to new slots, without a random draw."""

    salt: str = ""
    ring: str = ""  # the ring's scheduler slots now

    def copy(self) -> SchedulerValues:
        return SchedulerValues(dict(self.values), self.salt, self.ring)

    def evade(self, net: Network, k: int) -> None:
        new = f"sched_{digest(f'{self.salt}:sched:evasion:{k}')[:10]}"
        for g in net.gang_ids:
            if self.values[g] == self.ring:
                self.values[g] = new
        self.ring = new


@dataclass
class IpBlocks:
    """The network block of each account's current IP: the ring's proxy pool is one hosting
    block, every other IP falls in an ordinary (residential / carrier) block of about ten IPs."""

    salt: str
    proxy_ips: frozenset[str]
    n_blocks: int
    _blocks: dict[str, str] = field(default_factory=dict, repr=False)

    def block(self, ip: str) -> str:
        got = self._blocks.get(ip)
        if got is None:
            if ip in self.proxy_ips:
                got = f"net_{digest(f'{self.salt}:hosting')[:6]}"
            else:
                k = int(digest(f"{self.salt}:ip:{ip}")[:8], 16) % self.n_blocks
                got = f"net_{digest(f'{self.salt}:block:{k}')[:6]}"
            self._blocks[ip] = got
        return got

    def value(self, net: Network, account_id: str) -> str:
        return self.block(net.accounts[account_id].ip_cluster_id)

    def copy(self) -> IpBlocks:
        return IpBlocks(self.salt, self.proxy_ips, self.n_blocks, dict(self._blocks))

    def evade(self, net: Network, k: int) -> None:
        return None


@dataclass(frozen=True)
class CreationWindows:
    """The creation window of each account's age, windows offset per network."""

    offset: int

    def value(self, net: Network, account_id: str) -> str:
        w = CREATION_WINDOW_DAYS
        age = net.accounts[account_id].account_age_days
        start = (age + self.offset) // w * w - self.offset
        return f"created_{max(0, start)}-{start + w - 1}_days_ago"

    def copy(self) -> CreationWindows:
        return self

    def evade(self, net: Network, k: int) -> None:
        return None


def _unique(salt: str, prefix: str, account_id: str) -> str:
    return f"{prefix}_{digest(f'{salt}:{prefix}:unique:{account_id}')[:10]}"


def _labels(salt: str, prefix: str, tag: str, n: int) -> list[str]:
    return [f"{prefix}_{digest(f'{salt}:{prefix}:{tag}:{i}')[:10]}" for i in range(n)]


def _look_alikes(b: TraceBuild, values: dict[str, str], ring: list[str], pool: list[str]) -> None:
    """Ordinary accounts carrying the ring's own values (stolen photos, a template sold on, a
    scheduler preset): up to two per ring value, taken from `pool`."""
    for label in ring:
        for aid in b.rng.sample(pool, min(len(pool), b.rng.randint(0, 2))):
            values[aid] = label


def _build_ip(b: TraceBuild) -> IpBlocks:
    n_ips = len({a.ip_cluster_id for a in b.net.accounts.values()})
    return IpBlocks(b.salt, b.proxy_ips, max(1, n_ips // _IPS_PER_BLOCK))


def _build_creation(b: TraceBuild) -> CreationWindows:
    return CreationWindows(b.rng.randrange(CREATION_WINDOW_DAYS))


def _content_builder(
    prefix: str, ring_sizes: tuple[int, int], crowd_tag: str, role: str, score: str
) -> Callable[[TraceBuild], StoredValues]:
    """Photo or bio: members on the ring's values with the channel's strength (else on a crowd
    value), the role's look-alike pages sharing a pool round-robin (at least four each), ordinary
    accounts with a reused-looking score or by chance on crowd values, the rest unique."""

    def build(b: TraceBuild) -> StoredValues:
        accounts = list(b.net.accounts.values())
        ring = _labels(b.salt, prefix, "ring", b.rng.randint(*ring_sizes))
        # many crowd values, so members pushed onto them rarely meet there by chance
        crowd = _labels(b.salt, prefix, crowd_tag, max(8, len(accounts) // 40))
        pool = _labels(b.salt, prefix, role, max(1, sum(a.role == role for a in accounts) // 4))
        gang_index = {g: i for i, g in enumerate(b.net.gang_ids)}
        values: dict[str, str] = {}
        seen = 0
        for a in accounts:
            u, pick = b.rng.random(), b.rng.random()
            on_crowd = crowd[int(pick * len(crowd))]
            if a.is_gang:
                coherent = u < b.strength
                v = ring[gang_index[a.account_id] % len(ring)] if coherent else on_crowd
            elif a.role == role:
                v = pool[seen % len(pool)]
                seen += 1
            elif getattr(a, score) > _REUSED_LOOK or u < _STOCK_SHARE:
                v = on_crowd
            else:
                v = _unique(b.salt, prefix, a.account_id)
            values[a.account_id] = v
        crowd_set = set(crowd)
        others = [
            a.account_id for a in accounts if not a.is_gang and values[a.account_id] in crowd_set
        ]
        _look_alikes(b, values, ring, others)
        return StoredValues(values)

    return build


def _build_schedule(b: TraceBuild) -> SchedulerValues:
    """One scheduler for the ring (members on it with the channel's strength, else on a
    scheduling app's default slots), a share of ordinary accounts on those defaults."""
    accounts = list(b.net.accounts.values())
    ring = _labels(b.salt, "sched", "ring", 1)
    crowd = _labels(b.salt, "sched", "default", max(6, len(accounts) // 60))
    values: dict[str, str] = {}
    for a in accounts:
        u, pick = b.rng.random(), b.rng.random()
        on_crowd = crowd[int(pick * len(crowd))]
        if a.is_gang:
            v = ring[0] if u < b.strength else on_crowd
        elif u < _SCHEDULER_SHARE:
            v = on_crowd
        else:
            v = _unique(b.salt, "sched", a.account_id)
        values[a.account_id] = v
    _look_alikes(b, values, ring, [a.account_id for a in accounts if a.role == "ordinary"])
    return SchedulerValues(values, b.salt, ring[0])


IP = TraceKind(
    name="ip",
    channel="shared_proxies",
    note="the network block (routed prefix) the account's current IP sits in",
    detail="the network block (routed prefix) of the account's current `ip_cluster_id`; "
    "accounts on one IP are always in one block",
    prompt_note="network block",
    label="IP",
    crowd_reason="this operator moved to residential proxies or carrier NAT",
    at_full_strength="the proxy pool is one hosting block: every member plus the VPN users and "
    "carrier-NAT users on those proxies",
    weakened="members on residential IPs or carrier NAT sit in ordinary blocks of about ten IPs "
    "(≈16 innocents)",
    build=_build_ip,
)
PHOTO = TraceKind(
    name="photo",
    channel="content_reuse",
    note="the perceptual hash of the account's profile photo",
    detail="the perceptual hash of the profile photo",
    prompt_note="photo hash",
    label="Profile-photo",
    crowd_reason="this operator uses unique generated faces",
    at_full_strength="the operator's 2–3 photos, shared by the members",
    weakened="members on stock photos shared by ordinary accounts",
    build=_content_builder("ph", (2, 3), "stock", "meme_page", "photo_reuse_score"),
)
BIO = TraceKind(
    name="bio",
    channel="content_reuse",
    note="the template the account's bio was written from",
    detail="the template the bio was written from",
    prompt_note="bio template",
    label="Bio-template",
    crowd_reason="this operator writes unique bios",
    at_full_strength="1–2 templates shared by the members",
    weakened="generic templates shared by ordinary accounts",
    build=_content_builder("bio", (1, 2), "generic", "small_business", "bio_template_score"),
)
CREATION = TraceKind(
    name="creation",
    channel="creation_burst",
    note=f"the {CREATION_WINDOW_DAYS}-day window the account was created in",
    detail=f"the {CREATION_WINDOW_DAYS}-day window the account was created in (a function of "
    "`account_age_days`)",
    prompt_note=f"{CREATION_WINDOW_DAYS}-day creation window",
    label="Creation-window",
    crowd_reason="this operator uses bought, aged accounts",
    at_full_strength="the burst falls in one or two windows, with the ordinary sign-up surge "
    "around it",
    weakened="aged accounts land in ordinary windows",
    build=_build_creation,
)
SCHEDULE = TraceKind(
    name="schedule",
    channel="posting_sync",
    note="the posting-schedule fingerprint (the slots its posts go out in)",
    detail="the posting-schedule fingerprint",
    prompt_note="posting slots",
    label="Posting-schedule",
    crowd_reason="this operator jitters its schedulers",
    at_full_strength="one scheduler for the whole ring",
    weakened="a scheduling app's default slots, shared by ordinary accounts",
    build=_build_schedule,
)
