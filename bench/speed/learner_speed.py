"""What the learner of the current operator costs: a refit after a debrief, the scoring of a step
with the fitted trees against the logistic model alone, and the stored model's size.

    python bench/speed/learner_speed.py [--campaign 0] [--rounds 10] [--json]

A hard adaptive campaign is played in-process with the learning agent's loop
(bench/experiments/campaign_curves.py: labelled rows, the drift test's errors, refit, learner,
yields after every round). Each refit is timed; after the last round, every inspected account of
the last debrief is scored once per recorded step with the pinned version's trees
(`profile_model`) and with its logistic weights alone, the difference being what the learner adds
to a step. Wall time, medians, on one process (`make bench` runs it after the timed sections).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.experiments.campaign_curves import learn, play  # noqa: E402
from bench.speed.timing import aligned, lap, median  # noqa: E402
from fakegang.tools.learning import experience, trace_yields  # noqa: E402
from fakegang.tools.memory.store import Memory  # noqa: E402
from fakegang.tools.rules.engine import score_observation  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.operator import after_round, opening  # noqa: E402

TASK = "hard"
#: Times each step's scoring is repeated (the median is reported).
REPEATS = 5


def bench(campaign: int = 0, rounds: int = 10) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "m.sqlite")
        weights = experience.latest_version(memory, TASK).as_rule_weights()
        yields = trace_yields.prior(TASK, None)
        state = opening(TASK, campaign)
        refits: list[float] = []
        for k in range(rounds):
            ep = Episode.for_adaptive_round(state)
            obs, starting = play(ep, weights, yields)
            _, state = after_round(state, ep.network, obs.flagged_ids)
            with lap(refits):
                weights, yields = learn(memory, TASK, f"r{k}", obs, starting, weights)
        version = experience.latest_version(memory, TASK)
        with_trees, logistic_only = [], []
        alone = {**weights, "profile_model": None}
        for _ in range(REPEATS):
            with lap(with_trees):
                score_observation(obs, starting, weights, yields)
            with lap(logistic_only):
                score_observation(obs, starting, alone, yields)
        blob = version.model.dumps() if version.model is not None else b""
        memory.close()
        return {
            "campaign": campaign,
            "rounds": rounds,
            "refit_s": {"median": round(median(refits[1:]), 3), "last": round(refits[-1], 3)},
            "inspected": len(obs.visible_accounts),
            "step_ms": {
                "trees": round(median(with_trees) * 1000, 2),
                "logistic": round(median(logistic_only) * 1000, 2),
            },
            "model_kb": round(len(blob) / 1024, 1),
            "fitted": version.model is not None,
        }


def table(r: dict) -> str:
    rows = [
        ("LEARNER (hard adaptive campaign, in-process)", ""),
        (
            f"  refit after a debrief, median of rounds 2-{r['rounds']}",
            f"{r['refit_s']['median']} s",
        ),
        (f"  refit after round {r['rounds']}", f"{r['refit_s']['last']} s"),
        (
            f"  scoring one step ({r['inspected']} inspected): trees / logistic",
            f"{r['step_ms']['trees']} / {r['step_ms']['logistic']} ms",
        ),
        ("  stored model (zlib pickle)", f"{r['model_kb']} KB"),
    ]
    return "\n".join(aligned(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaign", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    r = bench(args.campaign, args.rounds)
    print(json.dumps(r) if args.json else table(r))


if __name__ == "__main__":
    main()
