"""Evidence features the rule engine scores, computed from one observation.

Two families, the way dense-subgraph and lockstep detectors of fake followers work:
- for an INSPECTED account: its own content signals plus how it locks step with the ring found so
  far (creation burst, posting hour, mutual follows, co-following the same targets, shared IPs
  discounted by how crowded the IP is) and with other inspected accounts;
- for a merely VISIBLE account: who points at it (followed by likely members, an IP-cascade
  suspect, one of the starting ids).

Features are plain floats so a logistic model (tools/rules/rule_weights.json) turns them into
calibrated probabilities.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from fakegang_env.schema import AccountProfile, PlainObservation

AGE_CLOSE_DAYS = 10
HOUR_CLOSE = 1.5
COFOLLOW_MIN_JACCARD = 0.15
LOCKSTEP_MIN_VOTES = 3
CAP = 5


def circular_hour_diff(a: float, b: float) -> float:
    d = abs(a - b) % 24
    return min(d, 24 - d)


def jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def ip_weight(shared_ip_count: int) -> float:
    """Evidence of sharing an IP fades as the IP gets crowded (households, VPNs, carrier NAT)."""
    return 1.0 / math.log2(2 + max(0, shared_ip_count))


def circular_mean_hour(hours: list[float]) -> float:
    s = sum(math.sin(h / 24 * 2 * math.pi) for h in hours)
    c = sum(math.cos(h / 24 * 2 * math.pi) for h in hours)
    return (math.atan2(s, c) / (2 * math.pi) * 24) % 24


@dataclass
class CaseView:
    """An observation indexed for scoring (built once per step)."""

    obs: PlainObservation
    profiles: dict[str, AccountProfile]
    follows: dict[str, set[str]]
    followers: dict[str, set[str]]  # x -> inspected accounts that follow x
    flagged: set[str]
    suspects: set[str]
    starting: set[str]
    investigated: set[str] = field(default_factory=set)
    partners: dict[str, int] = field(default_factory=dict)  # lockstep partners per inspected id

    @classmethod
    def build(cls, obs: PlainObservation, starting_ids: list[str]) -> CaseView:
        profiles = {p.account_id: p for p in obs.visible_accounts}
        follows = {a: set(fs) for a, fs in obs.graph_edges.items()}
        followers: dict[str, set[str]] = {}
        for a, fs in follows.items():
            for x in fs:
                followers.setdefault(x, set()).add(a)
        return cls(
            obs=obs,
            profiles=profiles,
            follows=follows,
            followers=followers,
            flagged=set(obs.flagged_ids),
            suspects=set(obs.suspect_ids),
            starting=set(starting_ids),
            investigated=set(obs.investigated_ids),
            partners=_partner_counts(profiles, follows),
        )


#: Pairwise lockstep votes keyed by both snapshots; a snapshot only changes when re-inspected,
#: so each step computes votes for the new profile's pairs only (O(n) instead of O(n²)).
#: The key holds everything a vote reads (age, hour, IP, follows): one seed under two playbooks
#: has the same account ids and inspection steps but other follows and IPs.
_PAIR_VOTES: dict[tuple, int] = {}
_PAIR_CACHE_MAX = 200_000


def _snapshot_key(p: AccountProfile) -> tuple:
    traits = (p.account_age_days, p.avg_post_hour, p.ip_cluster_id, tuple(p.visible_follows))
    return (p.account_id, p.inspected_at_step, hash(traits))


def _partner_counts(
    profiles: dict[str, AccountProfile], follows: dict[str, set[str]]
) -> dict[str, int]:
    if len(_PAIR_VOTES) > _PAIR_CACHE_MAX:
        _PAIR_VOTES.clear()
    counts = dict.fromkeys(profiles, 0)
    items = list(profiles.items())
    keys = [_snapshot_key(p) for _, p in items]
    for i, (a_id, a) in enumerate(items):
        for j in range(i + 1, len(items)):
            b_id, b = items[j]
            key = (keys[i], keys[j])
            votes = _PAIR_VOTES.get(key)
            if votes is None:
                votes = lockstep_votes(a, b, follows.get(a_id, set()), follows.get(b_id, set()))
                _PAIR_VOTES[key] = votes
            if votes >= LOCKSTEP_MIN_VOTES:
                counts[a_id] += 1
                counts[b_id] += 1
    return counts


def lockstep_votes(a: AccountProfile, b: AccountProfile, fa: set[str], fb: set[str]) -> int:
    """How many independent lockstep cues two inspected accounts share (0-5)."""
    votes = 0
    if abs(a.account_age_days - b.account_age_days) <= AGE_CLOSE_DAYS:
        votes += 1
    if circular_hour_diff(a.avg_post_hour, b.avg_post_hour) <= HOUR_CLOSE:
        votes += 1
    if b.account_id in fa and a.account_id in fb:
        votes += 1
    if a.ip_cluster_id == b.ip_cluster_id:
        votes += 1
    if jaccard(fa, fb) >= COFOLLOW_MIN_JACCARD:
        votes += 1
    return votes


def profile_features(view: CaseView, account_id: str) -> dict[str, float]:
    """Features of one inspected account relative to the flagged core (itself excluded)."""
    p = view.profiles[account_id]
    fa = view.follows.get(account_id, set())
    core = [c for c in view.flagged if c != account_id and c in view.profiles]
    partners = view.partners.get(account_id, 0)
    feats: dict[str, float] = {
        "photo": p.photo_reuse_score,
        "bio": p.bio_template_score,
        "comment": p.comment_repeat_score,
        "log_shared_ip": math.log1p(p.shared_ip_count),
        "log_age": math.log1p(p.account_age_days) / 8.0,
        "mutual_rate": p.mutual_follow_rate,
        "name_changes": float(min(3, p.name_change_count)),
        "log_followers": math.log1p(p.follower_count) / 10.0,
        "partners": float(min(CAP, partners)),
        "has_core": 1.0 if core else 0.0,
        "core_mutual": 0.0,
        "core_in": 0.0,
        "core_out": 0.0,
        "core_cofollow": 0.0,
        "core_age": 0.0,
        "core_hour": 0.0,
        "core_ip": 0.0,
    }
    if not core:
        return feats
    core_profiles = [view.profiles[c] for c in core]
    core_follow_union: set[str] = set()
    for c in core:
        core_follow_union |= view.follows.get(c, set())
    mutual = sum(1 for c in core if c in fa and account_id in view.follows.get(c, set()))
    core_in = sum(1 for c in core if account_id in view.follows.get(c, set()))
    core_out = sum(1 for c in core if c in fa)
    median_age = statistics.median(cp.account_age_days for cp in core_profiles)
    core_hour = circular_mean_hour([cp.avg_post_hour for cp in core_profiles])
    same_ip = [cp for cp in core_profiles if cp.ip_cluster_id == p.ip_cluster_id]
    feats.update(
        core_mutual=float(min(CAP, mutual)),
        core_in=float(min(CAP, core_in)),
        core_out=float(min(CAP, core_out)),
        core_cofollow=jaccard(fa - set(core), core_follow_union - {account_id}),
        core_age=1.0 if abs(p.account_age_days - median_age) <= AGE_CLOSE_DAYS else 0.0,
        core_hour=1.0 if circular_hour_diff(p.avg_post_hour, core_hour) <= HOUR_CLOSE else 0.0,
        core_ip=ip_weight(p.shared_ip_count) if same_ip else 0.0,
    )
    return feats


def frontier_features(
    view: CaseView,
    account_id: str,
    likelihood: dict[str, float],
    known_likely: float | None = None,
) -> dict[str, float]:
    """Features of a visible, uninspected account from who points at it.

    `known_likely` (the sum of `likelihood`) is the same for every account of a step: a caller
    scoring the whole frontier passes it once instead of summing it per account."""
    pointing = view.followers.get(account_id, set())
    followed_by_flagged = sum(1 for a in pointing if a in view.flagged)
    probs = [likelihood.get(a, 0.0) for a in pointing]
    if known_likely is None:
        known_likely = sum(likelihood.values())
    return {
        "in_likely": min(float(CAP), sum(probs)),
        "frac_likely": sum(probs) / known_likely if known_likely > 0.5 else 0.0,
        "log_known_likely": math.log1p(known_likely),
        "in_likely_max": max(probs, default=0.0),
        "in_unlikely": min(float(CAP), sum(1.0 - q for q in probs)),
        "in_flagged": float(min(CAP, followed_by_flagged)),
        "ip_suspect": 1.0 if account_id in view.suspects and followed_by_flagged == 0 else 0.0,
        "starting": 1.0 if account_id in view.starting else 0.0,
    }
