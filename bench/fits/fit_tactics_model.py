"""Fit the tactics model: profile weights linear in the operator's channel strengths.

    python bench/fits/fit_tactics_model.py [--episodes 300] [--rounds 2] [--tasks easy medium hard]

Training data only: `mixed` playbooks keyed `tactics-fit:<task>:<i>` (no campaign, report or
calibration seed draws them) on episode seeds 200000+i. Each episode is explored with the truth
(the inspected accounts scored 0.99 / 0.01, as bench/experiments/evidence_ceiling.py's `perfect`
scorer), so the rows cover members and the innocents a good investigation meets; the rows
themselves are the ones `reflect` stores (tools/learning/experience.py `labelled_rows`: profile0,
profile1, profile).
Each feature gets one weight plus one per channel times that channel's strength, fitted as a MAP
logistic regression centred on the shipped weights (interactions at 0). A second round adds the
rows the first round's model reaches when it explores by itself, and refits (on training
campaigns 100-119, hard `mixed` learning AUC 0.42 with one round, 0.465 with two; medium 0.405
and 0.40). Writes tools/learning/tactics_weights.json, which tools/learning/tactics_model.py reads.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments.evidence_ceiling import perfect_scores  # noqa: E402
from fakegang.tools.learning import (
    refit,  # noqa: E402
    tactics_model,  # noqa: E402
)
from fakegang.tools.learning.experience import labelled_rows  # noqa: E402
from fakegang.tools.rules import engine as rules  # noqa: E402
from fakegang.tools.rules.player import play_rules  # noqa: E402
from fakegang_env.tactics import CHANNELS, mixed_playbook  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tools" / "learning" / "tactics_weights.json"
SEED_BASE = 200_000
#: Prior precision of the joint fit (tens of thousands of rows: the data decides).
FIT_STRENGTH = 1.0


def expanded(features: dict[str, float], strengths: dict[str, float]) -> dict[str, float]:
    """A row's features, plus each feature (and the bias) times each channel's strength."""
    out = dict(features)
    for c in CHANNELS:
        out[f"bias*{c}"] = strengths[c]
        for k, v in features.items():
            out[f"{k}*{c}"] = v * strengths[c]
    return out


def collect(task: str, episodes: int, model: dict | None = None) -> list[tuple[dict, int, float]]:
    """Rows of `episodes` training playbooks, explored with the truth or, given a fitted `model`,
    with that model's weights at each playbook's true strengths (the states it reaches itself)."""
    shipped = rules.load_weights()
    rows = []
    for i in range(episodes):
        playbook = mixed_playbook(f"tactics-fit:{task}:{i}")
        weights = None
        if model is not None:
            profile = tactics_model.profile_weights(task, playbook.channels, model)
            weights = {**shipped, "profile": profile}

        def scorer(episode, obs, starting, weights=weights):
            if weights is not None:
                return rules.score_observation(obs, starting, weights)
            return perfect_scores(obs, starting, set(episode.network.gang_ids))

        out = play_rules(task, SEED_BASE + i, tactics=playbook, scorer=scorer)
        ring = set(out["observation"].ring_ids or [])
        for r in labelled_rows(out["observation"], out["starting_ids"], ring, shipped):
            if r["kind"].startswith("profile"):
                rows.append((expanded(r["features"], playbook.channels), r["label"], r["weight"]))
    return rows


def fit_task(task: str, episodes: int, rounds: int) -> dict:
    """Round 1 explores with the truth; each later round adds the rows the previous round's model
    reaches by itself (DAgger-style, as fit_rule_weights.py's second round) and refits."""
    base = rules.load_weights()["profile"]
    prior = dict(base)
    for c in CHANNELS:
        prior.update({f"{k}*{c}": 0.0 for k in base})
    rows: list[tuple[dict, int, float]] = []
    model = None
    for _ in range(rounds):
        rows += collect(task, episodes, model)
        weights = refit.fit_map(prior, rows, FIT_STRENGTH)
        model = {
            "base": {k: weights[k] for k in base},
            "channels": {c: {k: weights[f"{k}*{c}"] for k in base} for c in CHANNELS},
        }
    assert model is not None
    return {**model, "rows": len(rows), "episodes": episodes, "rounds": rounds}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=300)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--tasks", nargs="+", default=["easy", "medium", "hard"])
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    tasks = {}
    for task in args.tasks:
        t0 = time.perf_counter()
        tasks[task] = fit_task(task, args.episodes, args.rounds)
        print(f"{task}: {tasks[task]['rows']} rows, {time.perf_counter() - t0:.0f} s")
    script = "bench/fits/fit_tactics_model.py"
    note = f"fitted by {script} --episodes {args.episodes} --rounds {args.rounds}"
    text = json.dumps({"note": note, "tasks": tasks}, indent=1, sort_keys=True) + "\n"
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
