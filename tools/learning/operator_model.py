"""The learner of the current operator: who is a member, as this operator plays now.

Every debrief labels every account the episode inspected (tools/learning/experience.py keeps the
evidence vectors). This model is fitted on those rows after each debrief:

- **gradient-boosted trees** (scikit-learn's `GradientBoostingClassifier`, depth-3 trees) so that
  channels can interact ("a shared IP block means little unless the creation dates
  agree as well"), which a logistic model in the features cannot say;
- **on top of the typical operator**: the boosting starts from a fixed logistic model (its
  `init`, `TypicalOperator`: the typical operator's weights, or the refit ones once the debriefs
  show drift), so with few rows the trees add little and the prior speaks;
- **recent rounds weigh more** (the experience's recency weights), and rows from before the last
  drift (tools/learning/drift.py) are down-weighted by `STALE_WEIGHT`;
- **leaves of at least `MIN_LEAF` rows**: a debrief holds a few dozen rows, and smaller leaves
  fit the look-alike crowd of one round rather than the operator.

No member row is copied with a trait masked: the report reader finds the first member, and such
copies mostly scored innocents who lacked one trait as members (docs/design-decisions.md, "The
learner without masked copies").

A fitted model is stored with its weights version (`operator_models`), so an episode that pins
the version scores with the same trees on resume, replay and fork. It is serialised with pickle
(what scikit-learn documents for persistence): the memory file is the agent's own local state,
like LangGraph's checkpoints in the same file.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fakegang.tools.learning.one_thread import one_thread

Row = tuple[dict[str, float], int, float]

#: What an operator can hide, as the evidence shows it: trait -> (words, profile features).
TRAITS: dict[str, tuple[str, tuple[str, ...]]] = {
    "content": ("reused photos, bios and comments", ("photo", "bio", "comment")),
    "ip": ("shared IP blocks", ("log_shared_ip", "core_ip")),
    "age": ("creation dates", ("log_age", "core_age")),
    "schedule": ("posting schedules", ("core_hour",)),
    "follows": (
        "follows inside the ring",
        ("core_cofollow", "core_in", "core_out", "core_mutual", "mutual_rate", "partners"),
    ),
    "camouflage": ("thin follower counts", ("log_followers",)),
    "renames": ("renamed accounts", ("name_changes",)),
}
#: Boosting: trees, depth (3: up to three features interact), shrinkage and the smallest leaf.
TREES = 40
DEPTH = 3
LEARNING_RATE = 0.1
MIN_LEAF = 40
#: Rows of episodes before the last drift count this much (not zero: the old regime may return).
STALE_WEIGHT = 0.1
#: A trait whose members-vs-innocents AUC is at least this still betrays the ring; at most
#: HIDDEN_AUC it is hidden (insights in words).
BETRAYS_AUC = 0.75
HIDDEN_AUC = 0.6


class TypicalOperator:
    """A fixed logistic model as the boosting's starting point (`init`): fitting it is a no-op.

    scikit-learn asks `init` for `fit` and `predict_proba` only."""

    def __init__(self, weights: Mapping[str, float], names: Sequence[str]) -> None:
        self.weights = dict(weights)
        self.names = list(names)
        self.classes_ = np.array([0, 1])

    def fit(self, x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None):
        return self

    def get_params(self, deep: bool = True) -> dict:
        return {"weights": self.weights, "names": self.names}

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        w = np.array([self.weights.get(n, 0.0) for n in self.names])
        p = 0.5 * (1.0 + np.tanh(0.5 * (self.weights.get("bias", 0.0) + x @ w)))
        return np.column_stack([1.0 - p, p])


@dataclass
class OperatorModel:
    """A fitted learner: the boosted trees and the feature order they read."""

    booster: object
    names: list[str]
    rows: int

    def probabilities(self, feats: Sequence[Mapping[str, float]]) -> list[float]:
        """P(member) for each feature dict (one call per step for every inspected account)."""
        if not feats:
            return []
        with one_thread("sklearn.ensemble"):
            p = self.booster.predict_proba(_matrix(self.names, feats))[:, 1]
        return [float(v) for v in p]

    def dumps(self) -> bytes:
        return zlib.compress(pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL), 6)

    @staticmethod
    def loads(blob: bytes) -> OperatorModel:
        return pickle.loads(zlib.decompress(blob))


def _matrix(names: Sequence[str], feats: Sequence[Mapping[str, float]]) -> np.ndarray:
    return np.array([[float(f.get(n, 0.0)) for n in names] for f in feats], dtype=float)


def fit(rows: Sequence[Row], typical: Mapping[str, float]) -> OperatorModel | None:
    """Boosted trees on labelled rows on top of the `typical` logistic weights (None when the
    rows hold one class only: nothing to learn apart)."""
    if len({label for _, label, _ in rows}) < 2:
        return None
    from sklearn.ensemble import GradientBoostingClassifier  # lazy: sklearn imports scipy

    names = sorted(k for k in typical if k != "bias")
    x = _matrix(names, [f for f, _, _ in rows])
    y = np.array([label for _, label, _ in rows])
    sw = np.array([w for _, _, w in rows], dtype=float)
    booster = GradientBoostingClassifier(
        n_estimators=TREES,
        max_depth=DEPTH,
        learning_rate=LEARNING_RATE,
        min_samples_leaf=MIN_LEAF,
        random_state=0,
        init=TypicalOperator(typical, names),
    )
    with one_thread("sklearn.ensemble"):
        booster.fit(x, y, sample_weight=sw)
    return OperatorModel(booster, names, len(rows))


def prediction_errors(scorer_probabilities: Sequence[float], labels: Sequence[int]) -> list[float]:
    """Per-account errors of a prediction: 1 - the probability given to the true label."""
    return [
        round(1.0 - (p if y == 1 else 1.0 - p), 4)
        for p, y in zip(scorer_probabilities, labels, strict=True)
    ]


def trait_evidence(rows: Sequence[Row]) -> dict[str, float]:
    """Per trait, how well it alone tells members from innocents in `rows` (ROC AUC of the sum
    of its features, 0.5: not at all), from scikit-learn's `roc_auc_score`."""
    labels = [label for _, label, _ in rows]
    if len(set(labels)) < 2:
        return {}
    from sklearn.metrics import roc_auc_score

    weights = [w for _, _, w in rows]
    out = {}
    for trait, (_, names) in TRAITS.items():
        score = [_trait_score(f, names) for f, _, _ in rows]
        out[trait] = round(float(roc_auc_score(labels, score, sample_weight=weights)), 3)
    return out


#: Features whose *low* values look like a member (new accounts, few followers).
LOW_IS_MEMBER = frozenset({"log_age", "log_followers"})


def _trait_score(f: Mapping[str, float], names: Sequence[str]) -> float:
    return sum((-1.0 if n in LOW_IS_MEMBER else 1.0) * f.get(n, 0.0) for n in names)


def in_words(evidence: Mapping[str, float]) -> str | None:
    """'this operator now hides creation dates; posting schedules still betray it' (None when
    no trait is clearly hidden or clearly betraying)."""
    hidden = [TRAITS[t][0] for t, auc in evidence.items() if auc <= HIDDEN_AUC]
    betray = [TRAITS[t][0] for t, auc in evidence.items() if auc >= BETRAYS_AUC]
    parts = []
    if hidden:
        parts.append("this operator now hides " + _join(hidden))
    if betray:
        parts.append(_join(betray) + " still betray it")
    return "; ".join(parts) or None


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
