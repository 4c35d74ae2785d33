"""Refit the rule weights from labelled experience, pulled toward the shipped ones.

A maximum-a-posteriori logistic regression: log-loss on the recent labelled rows (weighted by
recency, so the newest regime of a campaign dominates) plus a Gaussian prior centred on the
shipped weights, `strength/2 · ||w − w0||²`. With no rows the fit *is* the prior; a few rows move
it a little; many consistent rows move it a lot. That is what lets the agent unlearn "shared
proxies mean a ring" when an operator switches to residential proxies, without forgetting
everything after one odd episode.

Hand-rolled (numpy Newton steps) instead of scikit-learn because sklearn cannot centre the
penalty on a prior other than zero and is not a runtime dependency; 18 features and a few
thousand rows converge in a handful of Newton steps, deterministically, in milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Prior precision: how many "rows' worth" of belief the shipped weights carry per feature.
PRIOR_STRENGTH = {"profile": 1.0, "frontier": 10.0}
#: Recency: a row from `h` episodes ago counts HALF_LIFE-halved (h = 0 for the last episode).
HALF_LIFE_EPISODES = 1.5
NEWTON_STEPS = 25
TOL = 1e-8


#: Drift check: refit only when the shipped profile model's recency-weighted log-loss on the
#: debriefs (with the confirmed core) exceeds this. Measured on terminal debriefs of seeds
#: 100-102: classic 0.000-0.015; aged_accounts / mixed mostly 0.05-0.86.
SHIFT_LOSS = 0.03


def mean_log_loss(weights: dict[str, float], rows: Sequence[tuple[dict, int, float]]) -> float:
    """Weighted mean log-loss of a logistic model on (features, label, weight) rows (0 if none)."""
    if not rows:
        return 0.0
    names = sorted(k for k in weights if k != "bias")
    w = np.array([weights.get("bias", 0.0)] + [weights[n] for n in names])
    x = np.array([[1.0] + [float(f.get(n, 0.0)) for n in names] for f, _, _ in rows])
    y = np.array([float(label) for _, label, _ in rows])
    sw = np.array([float(weight) for _, _, weight in rows])
    p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30.0, 30.0)))
    loss = -(y * np.log(np.maximum(p, 1e-12)) + (1 - y) * np.log(np.maximum(1 - p, 1e-12)))
    return float((sw * loss).sum() / sw.sum())


def recency_weight(age_episodes: int) -> float:
    return 0.5 ** (age_episodes / HALF_LIFE_EPISODES)


def fit_map(
    prior: dict[str, float],
    rows: Sequence[tuple[dict[str, float], int, float]],
    strength: float,
) -> dict[str, float]:
    """MAP logistic weights (same keys as `prior`, `bias` included) for (features, label, weight)
    rows. Features missing from `prior` are ignored; a feature missing from a row counts as 0."""
    names = sorted(k for k in prior if k != "bias")
    w0 = np.array([prior.get("bias", 0.0)] + [prior[n] for n in names], dtype=float)
    if not rows:
        return dict(prior)
    x = np.array([[1.0] + [float(f.get(n, 0.0)) for n in names] for f, _, _ in rows])
    y = np.array([float(label) for _, label, _ in rows])
    sw = np.array([float(weight) for _, _, weight in rows])
    reg = np.full(len(w0), strength)
    w = w0.copy()
    for _ in range(NEWTON_STEPS):
        z = np.clip(x @ w, -30.0, 30.0)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = x.T @ (sw * (p - y)) + reg * (w - w0)
        hess = (x * (sw * p * (1.0 - p))[:, None]).T @ x + np.diag(reg)
        delta = np.linalg.solve(hess, grad)
        w -= delta
        if float(np.max(np.abs(delta))) < TOL:
            break
    out = {"bias": round(float(w[0]), 4)}
    out.update({n: round(float(v), 4) for n, v in zip(names, w[1:], strict=True)})
    return out
