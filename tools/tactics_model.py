"""The operator's tactics, inferred from debriefs, and the evidence model that goes with them.

A ring operator's playbook is nine channel strengths (fakegang_env/tactics.py: creation burst,
posting sync, content reuse, shared proxies, ...). bench/fit_tactics_model.py fits, on training
playbooks only, a profile model whose logistic weights are linear in those strengths,
`w(s) = base + Σ_c s_c · channel_c` (tools/tactics_weights.json). Learning then has nine numbers
to infer from a debrief instead of eighteen weights: the strengths that best explain the labelled
rows (a MAP logistic fit in `s` with the base model's logit as a fixed offset, the prior at the
`mixed` mean), and `w(ŝ)` is the prior the refit (tools/refit.py) starts from.

Why: a refit from one or two debriefs of a new regime cannot tell which of eighteen weights
matter; the tactics model already knows how each channel's strength moves them. Measured on
training campaigns (README, "Learning that pays").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

import numpy as np

from fakegang.tools import refit
from fakegang_env.tactics import CHANNELS

#: The strengths believed before any debrief: the mean of a `mixed` channel (two to four of nine
#: channels weakened to U[0, 0.5], the rest U[0.75, 1]: about 0.67).
PRIOR_MEAN = 0.7
#: How many rows' worth of belief the prior mean carries per channel (training campaigns
#: 100-119, hard `mixed` learning AUC: 2 -> 0.42, 0.5 -> 0.41, with the one-round model).
PRIOR_STRENGTH = 2.0

Row = tuple[dict[str, float], int, float]


@lru_cache(maxsize=1)
def load_model() -> dict[str, dict]:
    """task -> {"base": weights, "channels": {channel: weights}} (empty if not fitted)."""
    path = resources.files("fakegang.tools").joinpath("tactics_weights.json")
    if not path.is_file():
        return {}
    return json.loads(path.read_text())["tasks"]


def has_model(task: str) -> bool:
    return task in load_model()


def profile_weights(
    task: str, strengths: dict[str, float], model: dict | None = None
) -> dict[str, float]:
    """The profile model for an operator with these channel strengths (a plain weight dict);
    `model` is one task's fitted model (default: the shipped one of `task`)."""
    model = model or load_model()[task]
    out = dict(model["base"])
    for c in CHANNELS:
        s = strengths.get(c, PRIOR_MEAN)
        for k, v in model["channels"][c].items():
            out[k] = out.get(k, 0.0) + v * s
    return {k: round(v, 4) for k, v in out.items()}


def estimate_strengths(task: str, rows: Sequence[Row]) -> dict[str, float]:
    """MAP channel strengths (clipped to [0, 1]) that explain labelled profile rows.

    The logit of a row is linear in the strengths: `base·x + Σ_c s_c (channel_c·x)`, so this
    is a logistic regression with nine coefficients and a fixed offset, solved by the refit's
    damped Newton method. No rows: the prior mean."""
    if not rows:
        return dict.fromkeys(CHANNELS, PRIOR_MEAN)
    model = load_model()[task]
    names = sorted(k for k in model["base"] if k != "bias")
    feats, y, sw = refit.design(names, rows)
    columns = ["bias", *names]  # feats' column order
    base = np.array([model["base"].get(n, 0.0) for n in columns])
    per_channel = np.array([[model["channels"][c].get(n, 0.0) for n in columns] for c in CHANNELS])
    s = refit.newton(
        feats @ per_channel.T,
        y,
        sw,
        np.full(len(CHANNELS), PRIOR_STRENGTH),
        np.full(len(CHANNELS), PRIOR_MEAN),
        offset=feats @ base,
    )
    return {c: round(float(min(1.0, max(0.0, v))), 3) for c, v in zip(CHANNELS, s, strict=True)}


def adapted_prior(task: str, rows: Sequence[Row]) -> tuple[dict[str, float], dict[str, float]]:
    """(profile weights for the operator the rows show, the strengths estimated)."""
    strengths = estimate_strengths(task, rows)
    return profile_weights(task, strengths), strengths
