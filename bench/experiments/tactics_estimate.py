"""How well do debriefs reveal the operator's tactics? The tactics model's strength estimate
(tools/learning/tactics_model.py `estimate`) against the playbook's true strengths.

    python bench/experiments/tactics_estimate.py [--task hard] [--playbooks 30] [--debriefs 3]
        [--json]

Held out from every fit: `mixed` playbooks keyed `tactics-eval:<task>:<i>` on episode seeds
90000+. Each playbook is played `--debriefs` times with the shipped weights (the agent's first
episodes after a switch), the debriefs' labelled rows stored as `reflect` stores them and
weighted by recency as the refit weights them; after each debrief the nine strengths are
estimated. Reported per number of debriefs: the mean absolute error of the estimate against the
truth, the prior's (every channel at PRIOR_MEAN) for comparison, the share of channels whose
truth lies within one sd of the estimate (about 0.68 if the sd is honest), and how well the
report's "weakened" (strength + sd below 0.5) finds the channels truly below 0.5: recall and
precision.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from fakegang.tools.learning import refit, tactics_model
from fakegang.tools.learning.experience import labelled_rows
from fakegang.tools.rules.engine import load_weights
from fakegang.tools.rules.player import play_rules
from fakegang_env.tactics import CHANNELS, mixed_playbook

SEED_BASE = 90_000


def estimates(
    task: str, index: int, debriefs: int
) -> tuple[dict, list[tactics_model.TacticsEstimate]]:
    """(true strengths, the estimate after each of `debriefs` debriefs) of one playbook."""
    playbook = mixed_playbook(f"tactics-eval:{task}:{index}")
    shipped = load_weights()
    episodes: list[list[tuple[dict, int, float]]] = []
    out = []
    for k in range(debriefs):
        played = play_rules(task, SEED_BASE + debriefs * index + k, tactics=playbook)
        obs = played["observation"]
        ring = set(obs.ring_ids or [])
        rows = labelled_rows(obs, played["starting_ids"], ring, shipped)
        episodes.append(
            [(r["features"], r["label"], r["weight"]) for r in rows if r["kind"] != "frontier"]
        )
        weighted = [
            (f, y, w * refit.recency_weight(len(episodes) - 1 - age))
            for age, rows_k in enumerate(episodes)
            for f, y, w in rows_k
        ]
        out.append(tactics_model.estimate(task, weighted))
    return dict(playbook.channels), out


def summary(task: str, playbooks: int, debriefs: int) -> dict:
    t0 = time.perf_counter()
    games = [estimates(task, i, debriefs) for i in range(playbooks)]
    per_k = []
    for k in range(debriefs):
        err = prior_err = 0.0
        hits = weak_true = weak_said = covered = 0
        for truth, est in games:
            said = set(est[k].weakened())
            for c in CHANNELS:
                miss = abs(est[k].strength[c] - truth[c])
                err += miss
                covered += miss <= est[k].sd[c]
                prior_err += abs(tactics_model.PRIOR_MEAN - truth[c])
                is_weak, said_weak = truth[c] < tactics_model.WEAK, c in said
                hits += is_weak and said_weak
                weak_true += is_weak
                weak_said += said_weak
        n = playbooks * len(CHANNELS)
        per_k.append(
            {
                "debriefs": k + 1,
                "mae": round(err / n, 3),
                "prior_mae": round(prior_err / n, 3),
                "within_one_sd": round(covered / n, 3),
                "weak_recall": round(hits / weak_true, 3) if weak_true else None,
                "weak_precision": round(hits / weak_said, 3) if weak_said else None,
            }
        )
    per_channel = {
        c: round(sum(abs(est[-1].strength[c] - truth[c]) for truth, est in games) / playbooks, 3)
        for c in CHANNELS
    }
    return {
        "task": task,
        "playbooks": playbooks,
        "by_debriefs": per_k,
        "mae_by_channel_last": per_channel,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="hard")
    p.add_argument("--playbooks", type=int, default=30)
    p.add_argument("--debriefs", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    res = summary(args.task, args.playbooks, args.debriefs)
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"{args.task} mixed, {args.playbooks} held-out playbooks ({res['seconds']} s)")
    print("debriefs  MAE    prior MAE  within 1 sd  weak recall  weak precision")
    for r in res["by_debriefs"]:
        print(
            f"{r['debriefs']:8d}  {r['mae']:.3f}  {r['prior_mae']:.3f}      "
            f"{r['within_one_sd']:.3f}        {r['weak_recall']}        {r['weak_precision']}"
        )
    print("MAE per channel after the last debrief:")
    for c, v in res["mae_by_channel_last"].items():
        print(f"  {c:18s} {v:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
