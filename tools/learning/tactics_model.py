"""The operator's tactics, inferred from debriefs, and the evidence model that goes with them.

A ring operator's playbook is nine channel strengths (fakegang_env/tactics.py: creation burst,
posting sync, content reuse, shared proxies, ...). bench/fits/fit_tactics_model.py fits, on training
playbooks only, a profile model whose logistic weights are linear in those strengths,
`w(s) = base + Σ_c s_c · channel_c` (tools/learning/tactics_weights.json). Learning then has nine
numbers to infer from a debrief instead of eighteen weights: the strengths that best explain the
labelled rows (a MAP logistic fit in `s` with the base model's logit as a fixed offset, the prior at
the `mixed` mean), and `w(ŝ)` is the prior the refit (tools/learning/refit.py) starts from.

Why: a refit from one or two debriefs of a new regime cannot tell which of eighteen weights
matter; the tactics model already knows how each channel's strength moves them. Measured on
training campaigns (README, "Learning that pays").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from fakegang.tools.learning import refit
from fakegang_env.tactics import CHANNELS

#: The strengths believed before any debrief: the mean of a `mixed` channel (two to four of nine
#: channels weakened to U[0, 0.5], the rest U[0.75, 1]: about 0.67).
PRIOR_MEAN = 0.7
#: How many rows' worth of belief the prior mean carries per channel (docs/design-decisions.md,
#: "Numbers behind the constants").
PRIOR_STRENGTH = 2.0
#: A channel below this strength counts as weakened (a `mixed` playbook weakens two to four
#: channels to U[0, 0.5] and keeps the rest in U[0.75, 1]).
WEAK = 0.5

Row = tuple[dict[str, float], int, float]


@lru_cache(maxsize=1)
def load_model() -> dict[str, dict]:
    """task -> {"base": weights, "channels": {channel: weights}} (empty if not fitted)."""
    path = resources.files("fakegang.tools.learning").joinpath("tactics_weights.json")
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


@dataclass(frozen=True)
class TacticsEstimate:
    """The strengths that best explain the debriefs, and how sure the fit is of each (the
    Laplace posterior sd: about the prior's 0.71 for a channel the rows say nothing about)."""

    strength: dict[str, float]
    sd: dict[str, float]

    def weakened(self) -> list[str]:
        """Channels estimated weak even one sd up: the ones a report can name."""
        return [c for c in CHANNELS if self.strength[c] + self.sd[c] < WEAK]

    def as_json(self) -> dict[str, dict[str, float]]:
        return {"strength": self.strength, "sd": self.sd}


def estimate(task: str, rows: Sequence[Row]) -> TacticsEstimate:
    """MAP channel strengths (clipped to [0, 1]) that explain labelled profile rows.

    The logit of a row is linear in the strengths: `base·x + Σ_c s_c (channel_c·x)`, so this
    is a logistic regression with nine coefficients and a fixed offset, solved by the refit's
    damped Newton method; the sd is read from the objective's curvature at the optimum. No rows:
    the prior. Measured against held-out playbooks' true strengths
    (bench/experiments/tactics_estimate.py):
    only a few channels are told well (README, "Learning that pays")."""
    prior_sd = round(PRIOR_STRENGTH**-0.5, 3)
    if not rows:
        return TacticsEstimate(
            dict.fromkeys(CHANNELS, PRIOR_MEAN), dict.fromkeys(CHANNELS, prior_sd)
        )
    model = load_model()[task]
    names = sorted(k for k in model["base"] if k != "bias")
    feats, y, sw = refit.design(names, rows)
    columns = ["bias", *names]  # feats' column order
    base = np.array([model["base"].get(n, 0.0) for n in columns])
    per_channel = np.array([[model["channels"][c].get(n, 0.0) for n in columns] for c in CHANNELS])
    z, offset = feats @ per_channel.T, feats @ base
    reg = np.full(len(CHANNELS), PRIOR_STRENGTH)
    s = refit.newton(z, y, sw, reg, np.full(len(CHANNELS), PRIOR_MEAN), offset=offset)
    sd = refit.posterior_sd(z, sw, reg, s, offset=offset)
    return TacticsEstimate(
        {c: round(float(min(1.0, max(0.0, v))), 3) for c, v in zip(CHANNELS, s, strict=True)},
        {c: round(float(v), 3) for c, v in zip(CHANNELS, sd, strict=True)},
    )


def adapted_prior(task: str, rows: Sequence[Row]) -> tuple[dict[str, float], TacticsEstimate]:
    """(profile weights for the operator the rows show, the tactics estimated)."""
    found = estimate(task, rows)
    return profile_weights(task, found.strength), found
