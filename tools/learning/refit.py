"""Refit the rule weights from labelled experience, pulled toward the shipped ones.

A maximum-a-posteriori logistic regression: log-loss on the recent labelled rows (weighted by
recency, so the newest regime of a campaign dominates) plus a Gaussian prior centred on the
shipped weights, `strength/2 · ||w − w0||²`. With no rows the fit *is* the prior; a few rows move
it a little; many consistent rows move it a lot. That is what lets the agent unlearn "shared
proxies mean a ring" when an operator switches to residential proxies, without forgetting
everything after one odd episode.

Hand-rolled (numpy Newton steps with a line search) instead of scikit-learn because sklearn
cannot centre the penalty on a prior other than zero and is not a runtime dependency; 18 features
and a few thousand rows converge in a handful of steps, deterministically, in milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fakegang.tools.learning.one_thread import one_thread

#: Prior precision: how many "rows' worth" of belief the shipped weights carry per feature:
#: strong enough that one odd debrief does not undo the shipped weights, weak enough that a
#: regime's debriefs move them (docs/design-decisions.md, "Numbers behind the constants").
PRIOR_STRENGTH = {"profile": 3.0, "frontier": 10.0}
#: Recency: a row from `h` episodes ago counts HALF_LIFE-halved (h = 0 for the last episode).
HALF_LIFE_EPISODES = 1.5
NEWTON_STEPS = 50
TOL = 1e-8
#: Armijo backtracking: accept a step that gains this share of the predicted decrease.
LINE_SEARCH_SLOPE = 1e-4
LINE_SEARCH_HALVINGS = 40


#: Drift check: refit only when the shipped profile model's recency-weighted log-loss on the
#: debriefs (with the confirmed core) exceeds this: above what the shipped weights score on the
#: regime they were fitted for, below a shifted regime's (docs/design-decisions.md, "Numbers
#: behind the constants").
SHIFT_LOSS = 0.03


def design(
    names: Sequence[str], rows: Sequence[tuple[dict, int, float]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, sw) of (features, label, weight) rows: x has a leading 1 (the bias) and then the
    features `names` in order, a feature missing from a row counting as 0."""
    x = np.array([[1.0] + [float(f.get(n, 0.0)) for n in names] for f, _, _ in rows])
    y = np.array([float(label) for _, label, _ in rows])
    sw = np.array([float(weight) for _, _, weight in rows])
    return x, y, sw


def mean_log_loss(weights: dict[str, float], rows: Sequence[tuple[dict, int, float]]) -> float:
    """Weighted mean log-loss of a logistic model on (features, label, weight) rows (0 if none)."""
    if not rows:
        return 0.0
    names = sorted(k for k in weights if k != "bias")
    w = np.array([weights.get("bias", 0.0)] + [weights[n] for n in names])
    x, y, sw = design(names, rows)
    p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30.0, 30.0)))
    loss = -(y * np.log(np.maximum(p, 1e-12)) + (1 - y) * np.log(np.maximum(1 - p, 1e-12)))
    return float((sw * loss).sum() / sw.sum())


def recency_weight(age_episodes: int) -> float:
    return 0.5 ** (age_episodes / HALF_LIFE_EPISODES)


def _map_objective(
    w: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    sw: np.ndarray,
    reg: np.ndarray,
    w0: np.ndarray,
    offset: np.ndarray | float = 0.0,
) -> float:
    """Weighted log-loss plus the prior's penalty, computed without overflow: log(1 + e^z) is
    `logaddexp(0, z)`, exact for any z (no clipping, which would flatten the objective)."""
    z = offset + x @ w
    loss = np.logaddexp(0.0, z) - y * z
    return float((sw * loss).sum() + 0.5 * (reg * (w - w0) ** 2).sum())


def fit_map(
    prior: dict[str, float],
    rows: Sequence[tuple[dict[str, float], int, float]],
    strength: float,
) -> dict[str, float]:
    """MAP logistic weights (same keys as `prior`, `bias` included) for (features, label, weight)
    rows. Features missing from `prior` are ignored; a feature missing from a row counts as 0.

    Newton's method with a backtracking line search: the objective is strictly convex (the
    prior's penalty), but plain Newton steps overshoot when a few rows are separable and the
    start is far from the optimum, and a wild bias makes the engine flag everything or nothing.
    Each step here must lower the objective (docs/design-decisions.md, "Numbers behind the
    constants").
    """
    names = sorted(k for k in prior if k != "bias")
    w0 = np.array([prior.get("bias", 0.0)] + [prior[n] for n in names], dtype=float)
    if not rows:
        return dict(prior)
    x, y, sw = design(names, rows)
    w = newton(x, y, sw, np.full(len(w0), strength), w0)
    out = {"bias": round(float(w[0]), 4)}
    out.update({n: round(float(v), 4) for n, v in zip(names, w[1:], strict=True)})
    return out


def newton(
    x: np.ndarray,
    y: np.ndarray,
    sw: np.ndarray,
    reg: np.ndarray,
    w0: np.ndarray,
    offset: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Damped Newton iterations on the MAP objective from the prior (see `fit_map`); `offset` is
    a fixed per-row logit added to `x @ w` (tools/learning/tactics_model.py fits strengths on top
    of a fixed base model with it).

    On one BLAS thread: the systems are small (19 x 19 for a refit), and OpenBLAS's idle threads
    spin against other workers on the same cores (docs/design-decisions.md, "Numbers behind the
    constants")."""
    with one_thread("numpy", "blas"):
        w = w0.copy()
        value = _map_objective(w, x, y, sw, reg, w0, offset)
        for _ in range(NEWTON_STEPS):
            p = _probabilities(x, w, offset)
            grad = x.T @ (sw * (p - y)) + reg * (w - w0)
            hess = _hessian(x, sw, reg, p)
            delta = np.linalg.solve(hess, grad)
            decrease = float(grad @ delta)  # > 0: delta is a descent direction (hess is positive)
            step = 1.0
            for _ in range(LINE_SEARCH_HALVINGS):
                candidate = w - step * delta
                new_value = _map_objective(candidate, x, y, sw, reg, w0, offset)
                if new_value <= value - LINE_SEARCH_SLOPE * step * decrease:
                    break
                step *= 0.5
            else:
                break  # no step lowers the objective: w is optimal to numerical precision
            w, value = candidate, new_value
            if float(np.max(np.abs(step * delta))) < TOL:
                break
        return w


def posterior_sd(
    x: np.ndarray, sw: np.ndarray, reg: np.ndarray, w: np.ndarray, offset: np.ndarray | float = 0.0
) -> np.ndarray:
    """Laplace posterior sd of each coefficient at the MAP `w` (from the objective's curvature),
    on one BLAS thread like `newton`."""
    with one_thread("numpy", "blas"):
        hess = _hessian(x, sw, reg, _probabilities(x, w, offset))
        return np.sqrt(np.diag(np.linalg.inv(hess)))


def _probabilities(x: np.ndarray, w: np.ndarray, offset: np.ndarray | float) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * (offset + x @ w)))  # the logistic, overflow-free


def _hessian(x: np.ndarray, sw: np.ndarray, reg: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The MAP objective's Hessian at the row probabilities `p`."""
    return (x * (sw * p * (1.0 - p))[:, None]).T @ x + np.diag(reg)
