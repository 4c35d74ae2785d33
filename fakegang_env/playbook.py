"""Apply a playbook's channel strengths to a generated network, and to the ring's evasion.

Why a post-processing pass instead of knobs inside the generator: `classic` must stay today's
generator bit for bit, and every extra draw inside the build (profiles.py, wiring.py) would
shift the shared RNG stream. Here `classic` is the identity (the network is returned untouched)
and every other playbook edits the finished network with its own RNG,
`random.Random("<task>:<seed>:tactics")`.

Each channel draws its random numbers unconditionally and in a fixed order, whatever the
strengths: two playbooks on one seed see the same underlying draws, so a channel at 0.3 is a
weaker version of the same ring as at 0.6, and the network stays a pure function of
(task, seed, channel strengths). The ring's membership, the starting ids and the reported member
never change, so the budget that suffices for classic (the oracle wins) still applies.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from fakegang_env.gen_params import PARAMS, GenParams
from fakegang_env.network import Account, Network
from fakegang_env.profiles import (
    ORDINARY_CONTENT,
    ORDINARY_RENAMES,
    beta,
    name_changes,
    ordinary_age,
    ordinary_hour,
)
from fakegang_env.tactics import Playbook

__all__ = ["apply_playbook", "evasion_params"]

_CONTENT = ("photo_reuse_score", "bio_template_score", "comment_repeat_score")
#: At strength 0 this share of intra-ring follows / customer co-follows is still kept.
_RING_FLOOR = 0.15
_COFOLLOW_FLOOR = 0.25
#: Extra camouflage at strength 0: follows of innocents and of celebrities, follow-back rate.
_CAMO_EXTRA = (8, 20)
_CAMO_CELEBS = (1, 4)
_CAMO_FOLLOW_BACK = 0.55


def _lerp(strength: float, classic: float, weak: float) -> float:
    return weak + strength * (classic - weak)


def _hour_toward(classic: float, target: float, strength: float) -> float:
    diff = (target - classic + 12.0) % 24.0 - 12.0  # shortest signed way round the clock
    return round((classic + (1.0 - strength) * diff) % 24.0, 2)


@dataclass
class _Edit:
    """The network being edited, with the bookkeeping that keeps counts consistent."""

    net: Network
    rng: random.Random
    gang: list[Account]

    def follow(self, src: Account, dst: Account) -> None:
        if src is dst or dst.account_id in src.follows:
            return
        src.follows.append(dst.account_id)
        src.following_count += 1
        dst.follower_count += 1

    def unfollow(self, src: Account, dst_id: str) -> None:
        if dst_id not in src.follows:
            return
        src.follows.remove(dst_id)
        src.following_count -= 1
        self.net.accounts[dst_id].follower_count -= 1


def apply_playbook(net: Network, playbook: Playbook) -> Network:
    """Edit `net` in place to play `playbook` (classic: untouched) and return it."""
    if playbook.is_classic:
        return net
    s = playbook.channels
    gang = [net.accounts[g] for g in net.gang_ids]
    edit = _Edit(net, random.Random(f"{net.task}:{net.seed}:tactics"), gang)
    _creation_burst(edit, s["creation_burst"])
    _posting_sync(edit, s["posting_sync"])
    _content_reuse(edit, s["content_reuse"])
    _renames(edit, s["renames"])
    _shared_proxies(edit, s["shared_proxies"])
    _ring_density(edit, s["ring_density"])
    _lockstep_cofollow(edit, s["lockstep_cofollow"])
    _camouflage(edit, s["camouflage"])
    net._reindex()
    return net


def _creation_burst(edit: _Edit, strength: float) -> None:
    """Weak: accounts bought aged, each with its own ordinary-looking age."""
    for a in edit.gang:
        target = ordinary_age(edit.rng)
        a.account_age_days = max(1, round(_lerp(strength, a.account_age_days, target)))


def _posting_sync(edit: _Edit, strength: float) -> None:
    """Weak: per-account scheduler jitter pulls each hour toward an ordinary user's."""
    for a in edit.gang:
        a.avg_post_hour = _hour_toward(a.avg_post_hour, ordinary_hour(edit.rng), strength)


def _content_reuse(edit: _Edit, strength: float) -> None:
    """Weak: unique generated photos, bios and comments score like ordinary users'."""
    for a in edit.gang:
        for key in _CONTENT:
            target = beta(edit.rng, *ORDINARY_CONTENT[key])
            setattr(a, key, round(_lerp(strength, getattr(a, key), target), 4))


def _renames(edit: _Edit, strength: float) -> None:
    """Weak: the rename history is an ordinary user's (the count no longer stands out)."""
    for a in edit.gang:
        u = edit.rng.random()
        ordinary = name_changes(edit.rng, ORDINARY_RENAMES)
        if u >= strength:
            a.name_change_count = ordinary


def _fresh_ip(rng: random.Random, used: set[str]) -> str:
    while True:
        label = f"ip_{rng.getrandbits(16):04x}"
        if label not in used:
            used.add(label)
            return label


def _shared_proxies(edit: _Edit, strength: float) -> None:
    """Weak: residential proxies (one fresh IP each) or a crowded carrier-NAT / VPN exit."""
    net, rng = edit.net, edit.rng
    used = {a.ip_cluster_id for a in net.accounts.values()}
    proxies = {a.ip_cluster_id for a in edit.gang}
    crowded = sorted(
        {a.ip_cluster_id for a in net.accounts.values() if a.role == "vpn_user"} - proxies
    )
    for a in edit.gang:
        u, nat, pick = rng.random(), rng.random(), rng.random()
        if u < strength:
            continue
        if nat < 0.3 and crowded:
            a.ip_cluster_id = crowded[int(pick * len(crowded))]
        else:
            a.ip_cluster_id = _fresh_ip(rng, used)


def _ring_density(edit: _Edit, strength: float) -> None:
    """Weak: loose cells. Intra-ring follows are dropped, but every member keeps one link."""
    keep_p = _lerp(strength, 1.0, _RING_FLOOR)
    ring = {a.account_id for a in edit.gang}
    for a in edit.gang:
        intra = [f for f in a.follows if f in ring]
        draws = [edit.rng.random() for _ in intra]
        kept = [f for f, u in zip(intra, draws, strict=True) if u < keep_p]
        if intra and not kept:
            kept = [intra[0]]
        for f in intra:
            if f not in kept:
                edit.unfollow(a, f)


def _lockstep_cofollow(edit: _Edit, strength: float) -> None:
    """Weak: staggered, partial co-follows of the customers (each member keeps at least one)."""
    keep_p = _lerp(strength, 1.0, _COFOLLOW_FLOOR)
    customers = {a.account_id for a in edit.net.accounts.values() if a.role == "customer"}
    for a in edit.gang:
        bought = [f for f in a.follows if f in customers]
        draws = [edit.rng.random() for _ in bought]
        kept = [f for f, u in zip(bought, draws, strict=True) if u < keep_p]
        if bought and not kept:
            kept = [bought[0]]
        for f in bought:
            if f not in kept:
                edit.unfollow(a, f)


def _camouflage(edit: _Edit, strength: float) -> None:
    """Weak: many follows of celebrities and ordinary users, who often follow back."""
    net, rng = edit.net, edit.rng
    celebs = [a for a in net.accounts.values() if a.role == "celebrity"]
    innocents = [a for a in net.accounts.values() if not a.is_gang and a.role != "celebrity"]
    weak = 1.0 - strength
    for a in edit.gang:
        n_users = round(weak * rng.randint(*_CAMO_EXTRA))
        n_celebs = round(weak * rng.randint(*_CAMO_CELEBS))
        users = rng.sample(innocents, min(len(innocents), _CAMO_EXTRA[1]))
        stars = rng.sample(celebs, min(len(celebs), _CAMO_CELEBS[1]))
        backs = [rng.random() for _ in users]
        for u, back in zip(users[:n_users], backs, strict=False):
            edit.follow(a, u)
            if back < _CAMO_FOLLOW_BACK * weak:
                edit.follow(u, a)
        for c in stars[:n_celebs]:
            edit.follow(a, c)


def evasion_params(task: str, playbook: Playbook) -> GenParams:
    """The task's evasion knobs, pushed toward stronger adaptation as `evasion` weakens.

    At strength 1 these are the task's own `PARAMS` (the same object, so classic evasion is
    untouched); at 0 most intra-ring follows are dropped, most members rotate IP and rename, and
    the hour shift doubles.
    """
    p = PARAMS[task]
    s = playbook.channels["evasion"]
    if s == 1.0:
        return p
    lo, hi = p.evasion_hour_shift
    return replace(
        p,
        evasion_drop=_lerp(s, p.evasion_drop, max(p.evasion_drop, 0.7)),
        evasion_rotate=_lerp(s, p.evasion_rotate, max(p.evasion_rotate, 0.8)),
        evasion_rename=_lerp(s, p.evasion_rename, max(p.evasion_rename, 0.7)),
        evasion_hour_shift=(_lerp(s, lo, 2 * lo), _lerp(s, hi, 2 * hi)),
    )
