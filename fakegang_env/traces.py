"""The ring's shared traces, and the platform search behind the investigator's `pivot` action.

A trace is a property an investigator can search the platform by: the network block an account's
IP sits in, its profile-photo hash, its bio template, its creation window, its posting schedule
(the kinds are listed once, in `fakegang_env/trace_catalogue.py`). The operator's channels leave
the ring sharing trace values (a proxy pool in one hosting block, a reused photo set, a bio
template, a creation burst, one scheduler); each weakened channel moves members onto values
shared by crowds of ordinary users instead (carrier and residential blocks, stock photos, generic
templates, busy creation windows, a scheduling app's default slots), so a pivot on it returns
ordinary users rather than nothing.

Why a separate pass, and one random stream per kind, `random.Random("<task>:<seed>:traces:<kind>")`:
the classic build and the playbook pass are pinned bit for bit, and every draw here would shift
their streams; and a kind drawing from a stream of its own moves no other kind's values when a
kind is added. The draws are unconditional, whatever the playbook, so two generations of one seed
share them and a channel at 0.3 is a weaker version of the same ring as at 0.6.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fakegang_env.trace_catalogue import SHIPPED_KINDS, trace_kinds
from fakegang_env.trace_kinds import TraceBuild, TraceKind, TraceValues, digest

if TYPE_CHECKING:  # the network imports this module; only for type hints here
    from fakegang_env.network import Network
    from fakegang_env.tactics import Playbook

__all__ = [
    "PAGE_SIZE",
    "TRACES",
    "Traces",
    "UnknownTraceError",
    "build_traces",
    "trace_strengths",
]

#: The shipped catalogue's trace names, in catalogue order (`trace_names()` is the catalogue in
#: force, which a test may extend).
TRACES: tuple[str, ...] = tuple(k.name for k in SHIPPED_KINDS)

#: At most this many matching ids come back from one pivot (with the total count).
PAGE_SIZE = 25


class UnknownTraceError(ValueError):
    """A trace name that is not in the catalogue; the message lists the valid ones."""


def trace_strengths(
    playbook: Playbook, kinds: tuple[TraceKind, ...] | None = None
) -> dict[str, float]:
    """How strongly each trace still ties the ring together under a playbook (its channel's
    strength: 1 = classic, 0 = the members sit on ordinary values)."""
    return {k.name: playbook.channels[k.channel] for k in kinds or trace_kinds()}


@dataclass
class Traces:
    """Every account's value of each trace kind, and the search order. Copied with the network;
    edited only by evasion."""

    salt: str
    kinds: dict[str, TraceValues]  # kind name -> its values, in catalogue order
    order_key: dict[str, str]  # account id -> salted hash: the order search results come in

    def copy(self) -> Traces:
        kinds = {name: values.copy() for name, values in self.kinds.items()}
        return Traces(salt=self.salt, kinds=kinds, order_key=self.order_key)

    def value(self, net: Network, trace: str, account_id: str) -> str:
        """The account's current value of `trace`."""
        values = self.kinds.get(trace)
        if values is None:
            raise UnknownTraceError(f"unknown trace {trace!r}; valid: {', '.join(self.kinds)}")
        return values.value(net, account_id)

    def matches(self, net: Network, trace: str, account_id: str) -> list[str]:
        """The other accounts sharing `account_id`'s current value of `trace`, in search order
        (a salted hash of the id: nothing about membership)."""
        target = self.value(net, trace, account_id)
        values = self.kinds[trace]
        hits = [a for a in net.accounts if a != account_id and values.value(net, a) == target]
        return sorted(hits, key=self.order_key.__getitem__)

    def evade(self, net: Network, k: int) -> None:
        """Evasion event k: each kind follows (the ring's scheduler moves to new slots)."""
        for values in self.kinds.values():
            values.evade(net, k)


def build_traces(net: Network, playbook: Playbook, proxy_ips: set[str]) -> Traces:
    """The traces of a finished network under `playbook`, one kind of the catalogue in force at a
    time, each from its own stream; `proxy_ips` are the ring's proxy pool as the classic build
    drew it (the hosting block, whichever IPs the members use now)."""
    salt = f"{net.task}:{net.seed}"
    kinds: dict[str, TraceValues] = {}
    for kind in trace_kinds():
        build = TraceBuild(
            net=net,
            salt=salt,
            strength=playbook.channels[kind.channel],
            proxy_ips=frozenset(proxy_ips),
            rng=random.Random(f"{salt}:traces:{kind.name}"),
        )
        kinds[kind.name] = kind.build(build)
    order_key = {a: digest(f"{salt}:order:{a}")[:16] for a in net.accounts}
    return Traces(salt=salt, kinds=kinds, order_key=order_key)
