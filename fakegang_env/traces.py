"""The ring's shared traces, and the platform search behind the investigator's `pivot` action.

A trace is a property an investigator can search the platform by: the network block an account's
IP sits in, its profile-photo hash, its bio template, its creation window, its posting schedule.
The operator's channels leave the ring sharing trace values (a proxy pool in one hosting block, a
reused photo set, a bio template, a creation burst, one scheduler); each weakened channel moves
members onto values shared by crowds of ordinary users instead (carrier and residential blocks,
stock photos, generic templates, busy creation windows, a scheduling app's default slots), so a
pivot on it returns ordinary users rather than nothing.

Why a separate pass with its own RNG, `random.Random("<task>:<seed>:traces")`: the classic build
and the playbook pass are pinned bit for bit, and every draw here would shift their streams. The
draws are unconditional and in a fixed order, whatever the playbook, so two generations of one
seed share them and a channel at 0.3 is a weaker version of the same ring as at 0.6.

Consistency with what INSPECT shows: `ip` is a function of `ip_cluster_id` (so an IP rotated by
evasion moves its account to another block), `creation` a function of `account_age_days`; a
member on the ring's photo, bio or schedule is one whose channel still reuses (a high
`photo_reuse_score` is a photo shared with others: meme pages share meme images, and accounts
with a reused-looking photo share stock photos). Mid-episode evasion moves the ring's scheduler
to new slots (`rotate_schedule`), as it shifts their posting hours together.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the network imports this module; only for type hints here
    from fakegang_env.network import Network
    from fakegang_env.tactics import Playbook

__all__ = [
    "PAGE_SIZE",
    "TRACES",
    "TRACE_CHANNELS",
    "TRACE_NOTES",
    "Traces",
    "UnknownTraceError",
    "build_traces",
    "trace_strengths",
]

#: The trace names a pivot accepts, in catalogue order.
TRACES: tuple[str, ...] = ("ip", "photo", "bio", "creation", "schedule")

#: The operator's channel each trace follows (a weakened channel weakens its trace).
TRACE_CHANNELS: dict[str, str] = {
    "ip": "shared_proxies",
    "photo": "content_reuse",
    "bio": "content_reuse",
    "creation": "creation_burst",
    "schedule": "posting_sync",
}

TRACE_NOTES: dict[str, str] = {
    "ip": "the network block (routed prefix) the account's current IP sits in",
    "photo": "the perceptual hash of the account's profile photo",
    "bio": "the template the account's bio was written from",
    "creation": "the 14-day window the account was created in",
    "schedule": "the posting-schedule fingerprint (the slots its posts go out in)",
}

#: At most this many matching ids come back from one pivot (with the total count).
PAGE_SIZE = 25
CREATION_WINDOW_DAYS = 14
_IPS_PER_BLOCK = 10  # ordinary blocks hold about this many IP labels
_STOCK_SHARE = 0.12  # ordinary accounts on a stock photo / generic bio without a high score
_REUSED_LOOK = 0.3  # a content score above this is a reused photo or templated bio
_SCHEDULER_SHARE = 0.2  # ordinary accounts posting through a scheduling app's default slots
_ROLE_POOLS = {"photo": "meme_page", "bio": "small_business"}
_PREFIX = {"photo": "ph", "bio": "bio", "schedule": "sched"}  # opaque labels: ph_3fa2...


class UnknownTraceError(ValueError):
    """A trace name that is not in TRACES; the message lists the valid ones."""


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def trace_strengths(playbook: Playbook) -> dict[str, float]:
    """How strongly each trace still ties the ring together under a playbook (its channel's
    strength: 1 = classic, 0 = the members sit on ordinary values)."""
    return {t: playbook.channels[c] for t, c in TRACE_CHANNELS.items()}


@dataclass
class Traces:
    """Every account's trace values (ip and creation derived on the fly from its signals) and
    the search order. Copied with the network; edited only by evasion."""

    salt: str
    proxy_ips: frozenset[str]
    n_blocks: int
    creation_offset: int
    values: dict[str, dict[str, str]]  # photo, bio, schedule: account id -> value
    order_key: dict[str, str]  # account id -> salted hash: the order search results come in
    ring_schedule: str  # the ring's scheduler slots now (evasion moves them)
    _blocks: dict[str, str] = field(default_factory=dict, repr=False)

    def copy(self) -> Traces:
        return Traces(
            salt=self.salt,
            proxy_ips=self.proxy_ips,
            n_blocks=self.n_blocks,
            creation_offset=self.creation_offset,
            values={t: dict(v) for t, v in self.values.items()},
            order_key=self.order_key,
            ring_schedule=self.ring_schedule,
            _blocks=dict(self._blocks),
        )

    def block(self, ip: str) -> str:
        """The network block of an IP label: the ring's proxy pool is one hosting block, every
        other IP falls in an ordinary (residential / carrier) block of about ten IPs."""
        got = self._blocks.get(ip)
        if got is None:
            if ip in self.proxy_ips:
                got = f"net_{_h(f'{self.salt}:hosting')[:6]}"
            else:
                k = int(_h(f"{self.salt}:ip:{ip}")[:8], 16) % self.n_blocks
                got = f"net_{_h(f'{self.salt}:block:{k}')[:6]}"
            self._blocks[ip] = got
        return got

    def creation_window(self, age_days: int) -> str:
        w = CREATION_WINDOW_DAYS
        start = (age_days + self.creation_offset) // w * w - self.creation_offset
        return f"created_{max(0, start)}-{start + w - 1}_days_ago"

    def value(self, net: Network, trace: str, account_id: str) -> str:
        """The account's current value of `trace`."""
        acc = net.accounts[account_id]
        if trace == "ip":
            return self.block(acc.ip_cluster_id)
        if trace == "creation":
            return self.creation_window(acc.account_age_days)
        if trace in self.values:
            return self.values[trace][account_id]
        raise UnknownTraceError(f"unknown trace {trace!r}; valid: {', '.join(TRACES)}")

    def matches(self, net: Network, trace: str, account_id: str) -> list[str]:
        """The other accounts sharing `account_id`'s current value of `trace`, in search order
        (a salted hash of the id: nothing about membership)."""
        target = self.value(net, trace, account_id)
        if trace == "ip":
            hits = [
                a
                for a, acc in net.accounts.items()
                if a != account_id and self.block(acc.ip_cluster_id) == target
            ]
        elif trace == "creation":
            hits = [
                a
                for a, acc in net.accounts.items()
                if a != account_id and self.creation_window(acc.account_age_days) == target
            ]
        else:
            hits = [a for a, v in self.values[trace].items() if v == target and a != account_id]
        return sorted(hits, key=self.order_key.__getitem__)

    def rotate_schedule(self, net: Network, k: int) -> None:
        """Evasion event k: the ring's scheduler moves to new slots (members on it follow)."""
        sched = self.values["schedule"]
        new = f"sched_{_h(f'{self.salt}:sched:evasion:{k}')[:10]}"
        for g in net.gang_ids:
            if sched[g] == self.ring_schedule:
                sched[g] = new
        self.ring_schedule = new


def _unique(salt: str, kind: str, account_id: str) -> str:
    return f"{kind}_{_h(f'{salt}:{kind}:unique:{account_id}')[:10]}"


def _labels(salt: str, kind: str, tag: str, n: int) -> list[str]:
    return [f"{kind}_{_h(f'{salt}:{kind}:{tag}:{i}')[:10]}" for i in range(n)]


def build_traces(net: Network, playbook: Playbook, proxy_ips: set[str]) -> Traces:
    """The traces of a finished network under `playbook`; `proxy_ips` are the ring's proxy pool
    as the classic build drew it (the hosting block, whichever IPs the members use now)."""
    salt = f"{net.task}:{net.seed}"
    rng = random.Random(f"{salt}:traces")
    s = trace_strengths(playbook)
    accounts = list(net.accounts.values())
    n = len(accounts)
    ring_photos = _labels(salt, "ph", "ring", rng.randint(2, 3))
    ring_bios = _labels(salt, "bio", "ring", rng.randint(1, 2))
    ring_sched = _labels(salt, "sched", "ring", 1)
    # many crowd values, so members pushed onto them rarely meet there by chance
    stock = {
        "photo": _labels(salt, "ph", "stock", max(8, n // 40)),
        "bio": _labels(salt, "bio", "generic", max(8, n // 40)),
        "schedule": _labels(salt, "sched", "default", max(6, n // 60)),
    }
    role_pools = {
        t: _labels(salt, _PREFIX[t], role, max(1, sum(a.role == role for a in accounts) // 4))
        for t, role in _ROLE_POOLS.items()
    }
    creation_offset = rng.randrange(CREATION_WINDOW_DAYS)
    values: dict[str, dict[str, str]] = {"photo": {}, "bio": {}, "schedule": {}}
    gang_index = {g: i for i, g in enumerate(net.gang_ids)}
    role_seen = dict.fromkeys(_ROLE_POOLS, 0)  # look-alike pages share round-robin: >= 4 each
    content = {"photo": "photo_reuse_score", "bio": "bio_template_score"}
    for a in accounts:
        draws = {t: (rng.random(), rng.random()) for t in ("photo", "bio", "schedule")}
        for t in ("photo", "bio"):
            u, pick = draws[t]
            crowd = stock[t][int(pick * len(stock[t]))]
            if a.is_gang:
                ring = ring_photos if t == "photo" else ring_bios
                coherent = u < s[t]
                v = ring[gang_index[a.account_id] % len(ring)] if coherent else crowd
            elif a.role == _ROLE_POOLS[t]:
                pool = role_pools[t]
                v = pool[role_seen[t] % len(pool)]
                role_seen[t] += 1
            elif getattr(a, content[t]) > _REUSED_LOOK or u < _STOCK_SHARE:
                v = crowd
            else:
                v = _unique(salt, _PREFIX[t], a.account_id)
            values[t][a.account_id] = v
        u, pick = draws["schedule"]
        crowd = stock["schedule"][int(pick * len(stock["schedule"]))]
        if a.is_gang:
            v = ring_sched[0] if u < s["schedule"] else crowd
        elif u < _SCHEDULER_SHARE:
            v = crowd
        else:
            v = _unique(salt, "sched", a.account_id)
        values["schedule"][a.account_id] = v
    # look-alikes on the ring's own values: ordinary accounts with a reused-looking photo or
    # bio that is in fact the ring's (stolen photos, a template sold on), and a few ordinary
    # accounts on the same scheduler preset; taken from crowds, so no crowd is emptied
    crowds = {t: set(stock[t]) for t in ("photo", "bio")}
    others = {
        t: [a.account_id for a in accounts if not a.is_gang and values[t][a.account_id] in crowd]
        for t, crowd in crowds.items()
    }
    others["schedule"] = [a.account_id for a in accounts if a.role == "ordinary"]
    for t, ring in (("photo", ring_photos), ("bio", ring_bios), ("schedule", ring_sched)):
        for label in ring:
            pool = others[t]
            for aid in rng.sample(pool, min(len(pool), rng.randint(0, 2))):
                values[t][aid] = label
    order_key = {a.account_id: _h(f"{salt}:order:{a.account_id}")[:16] for a in accounts}
    n_ips = len({a.ip_cluster_id for a in accounts})
    return Traces(
        salt=salt,
        proxy_ips=frozenset(proxy_ips),
        n_blocks=max(1, n_ips // _IPS_PER_BLOCK),
        creation_offset=creation_offset,
        values=values,
        order_key=order_key,
        ring_schedule=ring_sched[0],
    )
