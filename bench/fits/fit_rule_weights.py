"""Fit the rule engine's logistic weights on generated episodes (training seeds, not eval seeds).

Plays the current rule engine in-process on seeds 1000+ of every task, records the evidence
features of every inspected and every frontier account at each decision with its true label, and
fits two logistic regressions. Writes tools/rules/rule_weights.json. Run twice so the second fit
sees the states the first fitted policy reaches:

    python bench/fits/fit_rule_weights.py --seeds 1000-1024 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from sklearn.linear_model import LogisticRegression

from fakegang.tools.rules import engine as rules
from fakegang.tools.rules.evidence import CaseView, frontier_features, profile_features
from fakegang.tools.rules.player import play_rules

WEIGHTS_PATH = Path(__file__).resolve().parents[2] / "tools" / "rules" / "rule_weights.json"
SCRIPT = "bench/fits/fit_rule_weights.py"


def collect(tasks: list[str], seeds: range, sample_every: int = 2) -> tuple[list, list]:
    profile_rows: list[tuple[dict, int]] = []
    frontier_rows: list[tuple[dict, int]] = []

    def hook(episode, obs, starting, proposal) -> None:
        if obs.action_count % sample_every:
            return
        gang = set(episode.network.gang_ids)
        view = CaseView.build(obs, starting)
        likelihood = proposal.likelihood
        for a in view.profiles:
            profile_rows.append((profile_features(view, a), int(a in gang)))
        rng = random.Random(obs.action_count)
        frontier = [x for x in obs.visible_account_ids if x not in view.profiles]
        for x in rng.sample(frontier, min(len(frontier), 40)):
            frontier_rows.append((frontier_features(view, x, likelihood), int(x in gang)))

    for task in tasks:
        for seed in seeds:
            play_rules(task, seed, on_step=hook, early_submit=False)
    return profile_rows, frontier_rows


def fit_flag_calibration(seeds: range) -> dict:
    """Histogram-binning recalibration of FLAG confidences with Laplace smoothing.

    Flags are taken on the likeliest account of the moment, and in practice almost all of them
    are right even at a raw score of 0.6, so a logistic fit has no negatives to learn from.
    Per bin of raw score: confidence = (right + 1) / (flags + 2).
    """
    edges = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001]
    right = [0] * (len(edges) - 1)
    total = [0] * (len(edges) - 1)
    for task in ("easy", "medium", "hard"):
        for seed in seeds:
            for _, raw, is_gang in play_rules(task, seed)["flags"]:
                for i in range(len(edges) - 1):
                    if edges[i] <= raw < edges[i + 1]:
                        right[i] += int(is_gang)
                        total[i] += 1
    return {
        "edges": edges,
        "confidence": [round((r + 1) / (n + 2), 4) for r, n in zip(right, total, strict=True)],
        "flags": total,
        "right": right,
    }


def fit(rows: list[tuple[dict, int]], c: float) -> dict[str, float]:
    names = sorted(rows[0][0])
    x = [[f[n] for n in names] for f, _ in rows]
    y = [label for _, label in rows]
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(x, y)
    weights = {n: round(float(w), 4) for n, w in zip(names, model.coef_[0], strict=True)}
    weights["bias"] = round(float(model.intercept_[0]), 4)
    return weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1000-1029")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--c", type=float, default=1.0)
    args = parser.parse_args()
    lo, hi = (int(v) for v in args.seeds.split("-"))
    data = json.loads(WEIGHTS_PATH.read_text())  # --rounds 0 only refits the flag calibration
    for r in range(args.rounds):
        prof, front = collect(["easy", "medium", "hard"], range(lo, hi + 1))
        data = {
            "note": f"fitted by {SCRIPT} --seeds {args.seeds} (round {r + 1})",
            "profile": fit(prof, args.c),
            "frontier": fit(front, args.c),
            "samples": {"profile": len(prof), "frontier": len(front)},
        }
        WEIGHTS_PATH.write_text(json.dumps(data, indent=1) + "\n")
        rules.load_weights.cache_clear()
        pos = sum(y for _, y in prof)
        print(f"round {r + 1}: {len(prof)} profile rows ({pos} ring), {len(front)} frontier rows")
    data["flag_calibration"] = fit_flag_calibration(range(lo, hi + 1))
    WEIGHTS_PATH.write_text(json.dumps(data, indent=1) + "\n")
    rules.load_weights.cache_clear()
    print(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
