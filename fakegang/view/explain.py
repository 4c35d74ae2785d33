"""Why this account: the evidence behind each flagged (and each missed) account of an episode.

The rule engine scores an inspected account with a logistic model over evidence features
(tools/rules/evidence.py `profile_features`); each feature's contribution to its log-odds is
`weight · value`, which is what an investigator's case file lists. The score is taken from the
observation the agent had just before it flagged the account (its last flag), so the panel shows
the evidence that put the account in the case, under the weights the episode pinned; a missed
member is shown as the agent saw it at the end. Accounts revealed by a pivot also carry the
pivot's judgment (tools/rules/pivots.py), so their final score may differ from the profile
model's: both are given. Where the episode pinned a learner of the current operator
(tools/learning/operator_model.py), the profile score is its trees' and the listed contributions
are those of the logistic weights the trees start from.
"""

from __future__ import annotations

import math
from typing import Any

from fakegang.tools.rules.engine import score_case
from fakegang.tools.rules.evidence import CaseView, frontier_features, profile_features
from fakegang_env.schema import PlainObservation

#: Contributions listed per account (largest |weight · value| first).
TOP_FEATURES = 6


def _contributions(weights: dict[str, float], feats: dict[str, float]) -> list[list[Any]]:
    """[feature, value, weight · value] for the features that move the log-odds, largest first."""
    parts = [
        [k, round(v, 3), round(weights.get(k, 0.0) * v, 3)]
        for k, v in feats.items()
        if weights.get(k, 0.0) * v
    ]
    parts.sort(key=lambda p: -abs(p[2]))
    return parts[:TOP_FEATURES]


def _logit(p: float) -> float:
    """Log-odds, clipped: a score of exactly 0 or 1 still compares."""
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


class Explainer:
    """Scores observations lazily (one `score_case` per snapshot asked for) under fixed weights."""

    def __init__(
        self, starting: list[str], weights: dict[str, Any], yields: dict[str, float] | None
    ):
        self.starting, self.weights, self.yields = starting, weights, yields
        self._scored: dict[int, tuple[CaseView, dict[str, float], dict[str, float]]] = {}

    def _score(self, at: int, obs: dict[str, Any]):
        if at not in self._scored:
            view = CaseView.build(PlainObservation(**obs), self.starting)
            likelihood, frontier = score_case(view, self.weights, self.yields)
            self._scored[at] = (view, likelihood, frontier)
        return self._scored[at]

    def explain(self, account: str, at: int, obs: dict[str, Any]) -> dict[str, Any]:
        """The evidence on `account` in `obs`, the observation before action `at`."""
        view, likelihood, frontier = self._score(at, obs)
        if account in view.profiles:
            weights = self.weights["profile"]
            feats = profile_features(view, account)
            logistic = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, _z(weights, feats)))))
            learner = self.weights.get("profile_model")
            model = learner.probabilities([feats])[0] if learner is not None else logistic
            return {
                "as_of": at,
                "model": "profile",
                "score": round(likelihood.get(account, model), 3),
                "profile_score": round(model, 3),
                # the logistic model the learner's trees start from (None: no learner pinned)
                "logistic_score": round(logistic, 3) if learner is not None else None,
                "bias": round(weights.get("bias", 0.0), 3),
                "features": _contributions(weights, feats),
            }
        if account in frontier:
            weights = self.weights["frontier"]
            known = sum(likelihood.values())
            feats = frontier_features(view, account, likelihood, known)
            return {
                "as_of": at,
                "model": "frontier",
                "score": round(frontier[account], 3),
                "profile_score": None,
                "bias": round(weights.get("bias", 0.0), 3),
                "features": _contributions(weights, feats),
            }
        return {"as_of": at, "model": None, "score": None, "features": []}


def _z(weights: dict[str, float], feats: dict[str, float]) -> float:
    """The logistic model's log-odds, as tools/rules/engine.py `logistic` sums them."""
    return weights.get("bias", 0.0) + sum(weights.get(k, 0.0) * v for k, v in feats.items())


def odds_note(entry: dict[str, Any]) -> str:
    """One line: the score, and how far a pivot's judgment moved it from the profile model."""
    if entry.get("score") is None:
        return "not scored (not visible to the agent)"
    text = f"P(ring) {entry['score']:.2f} ({entry['model']} model)"
    ps = entry.get("profile_score")
    if ps is not None and abs(ps - entry["score"]) >= 0.01:
        shift = _logit(entry["score"]) - _logit(ps)
        text += f"; profile alone {ps:.2f}, pivot evidence {shift:+.2f} log-odds"
    ls = entry.get("logistic_score")
    if ps is not None and ls is not None and abs(ls - ps) >= 0.01:
        text += f"; the learner's trees {_logit(ps) - _logit(ls):+.2f} log-odds over the weights"
    return text
