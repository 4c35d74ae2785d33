"""The report reader: which of the starting accounts is the reported ring member.

The report names one member among look-alikes and ordinary accounts. Each of the member's
signals can be ordinary (an operator who hides content and IPs leaves nothing to flag it by), but
its profile as a whole still stands out among a dozen accounts: it follows many accounts, most of
which follow it back, and posts little. The evidence model scores an account for being in the
ring anywhere in the network; this model answers the report's narrower question, which one of
these accounts is the member, as a softmax over the starting accounts of boosted-tree scores.
bench/fits/fit_report_reader.py fits it with scikit-learn on training seeds (on hard also on the
rounds an adaptive operator reaches in training campaigns: its playbooks are chosen to survive a
reader) and writes its trees to tools/rules/report_reader.json.

The trees are stored as JSON, not pickled: a shipped model must load under every scikit-learn the
package accepts, and a pickle loads only under the version that wrote it. Evaluating them is the
boosting's sum (the starting score plus the learning rate times each tree's leaf), which
tests/agent/test_report_reader.py checks against scikit-learn's own `decision_function`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from fakegang_env.schema import AccountProfile
from fakegang_env.tasks import get_task

#: The features the reader reads, in the order of its trees' columns.
FEATURES = (
    "log_followers",
    "log_following",
    "log_posts",
    "log_age",
    "photo",
    "bio",
    "comment",
    "log_shared_ip",
    "name_changes",
    "mutual_rate",
    "log_follows_seen",
    "log_follows_shared",
)


def features(profile: AccountProfile, others_follow: set[str]) -> list[float]:
    """One starting account's row; `others_follow` are the accounts the other starting accounts
    follow."""
    follows = set(profile.visible_follows)
    row = {
        "log_followers": math.log1p(profile.follower_count) / 10.0,
        "log_following": math.log1p(profile.following_count) / 10.0,
        "log_posts": math.log1p(profile.post_count) / 10.0,
        "log_age": math.log1p(profile.account_age_days) / 8.0,
        "photo": profile.photo_reuse_score,
        "bio": profile.bio_template_score,
        "comment": profile.comment_repeat_score,
        "log_shared_ip": math.log1p(profile.shared_ip_count),
        "name_changes": float(min(3, profile.name_change_count)),
        "mutual_rate": profile.mutual_follow_rate,
        "log_follows_seen": math.log1p(len(follows)),
        "log_follows_shared": math.log1p(len(follows & others_follow)),
    }
    return [row[n] for n in FEATURES]


def report_rows(
    profiles: Mapping[str, AccountProfile], starting: Sequence[str]
) -> list[list[float]]:
    """The rows of every starting account (all of them inspected), in `starting`'s order."""
    rows = []
    for a in starting:
        others: set[str] = set()
        for b in starting:
            if b != a:
                others |= set(profiles[b].visible_follows)
        rows.append(features(profiles[a], others))
    return rows


@dataclass(frozen=True)
class Trees:
    """Boosted regression trees as scikit-learn's `tree_` arrays: per tree, per node, the left
    and right child (-1 at a leaf), the feature and threshold of its split and its value."""

    init: float
    rate: float
    trees: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[float, ...],
                       tuple[float, ...]], ...]  # fmt: skip

    def score(self, row: Sequence[float]) -> float:
        """The log-odds the boosting gives `row`."""
        total = self.init
        for left, right, feature, threshold, value in self.trees:
            node = 0
            while left[node] != -1:
                node = left[node] if row[feature[node]] <= threshold[node] else right[node]
            total += self.rate * value[node]
        return total

    def to_dict(self) -> dict:
        trees = [list(map(list, t)) for t in self.trees]
        return {"init": self.init, "rate": self.rate, "trees": trees}

    @classmethod
    def from_dict(cls, data: Mapping) -> Trees:
        trees = tuple(tuple(tuple(part) for part in t) for t in data["trees"])
        return cls(float(data["init"]), float(data["rate"]), trees)  # type: ignore[arg-type]


@lru_cache(maxsize=4)
def load(task: str) -> Trees | None:
    """The shipped reader of `task`'s reports (None: none was fitted for it)."""
    text = resources.files("fakegang.tools.rules").joinpath("report_reader.json").read_text()
    tasks = json.loads(text)["tasks"]
    return Trees.from_dict(tasks[task]["model"]) if task in tasks else None


def posterior(
    task: str, profiles: Mapping[str, AccountProfile], starting: Sequence[str]
) -> dict[str, float] | None:
    """P(this is the reported member) for each starting account, summing to 1. None until every
    starting account is inspected, without a reader for `task`, or for a report of another size
    than the task's (the shares are a choice among the accounts of a report like those it was
    fitted on; a hand-built case of one account would be certain of it). The same shares
    whatever the order of `starting`."""
    trees = load(task)
    if trees is None or len(starting) != get_task(task).n_starting:
        return None
    if any(a not in profiles for a in starting):
        return None
    starting = sorted(starting)
    scores = [trees.score(row) for row in report_rows(profiles, starting)]
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return {a: w / total for a, w in zip(starting, weights, strict=True)}
