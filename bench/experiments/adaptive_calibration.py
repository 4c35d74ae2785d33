"""Calibration of the adaptive operator: does it find a fixed detector's blind spot, and is the
evidence still there in every playbook it reaches?

    python bench/experiments/adaptive_calibration.py [--tasks hard,medium] [--campaigns 300-319]
        [--rounds 10] [--workers 2] [--json]

Each campaign plays `--rounds` adaptive rounds in-process (fakegang_env/operator.py decides every
round's playbook from the takedown list of the round before) against four investigators:

- `prior`: the learning agent's starting point, frozen: the rule engine with the unknown
  operator's weights and trace yields (tools/learning/experience.py `unknown_operator_version`,
  trace_yields.prior), pivoting as the graph does, nothing learned (`fakegang campaign --mode
  prior` plays the same decisions through the graph);
- `random`: the built-in random policy (flags at random): the operator has nothing to learn from;
- `perfect_pivoting`: bench/experiments/evidence_ceiling.py's pivoting perfect classifier, replayed
  on every playbook the operator reached against `prior` (as fixed playbooks, on the same round
  seeds);
- `oracle`: knows the ring.

Figures: win rate per round and over rounds 6-10, survival per round, the spread of the
operator's playbooks (mean pairwise L1 distance of round-10 playbooks across campaigns), and the
CPU time of generating a round and of deciding a move (medians). Campaign seeds 300+ are never
used to tune the operator (its knobs were chosen on campaigns 200-219).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments.evidence_ceiling import play_on  # noqa: E402
from fakegang.tools.learning import trace_yields  # noqa: E402
from fakegang.tools.learning.experience import unknown_operator_version
from fakegang.tools.rules import engine as rules
from fakegang.tools.rules.player import play_episode
from fakegang_env.arguments import seed_range
from fakegang_env.engine import Episode
from fakegang_env.evasion_budget import BUDGET, SPENDABLE
from fakegang_env.operator import OperatorState, after_round, opening
from fakegang_env.policies import play_policy
from fakegang_env.schema import PlainObservation
from fakegang_env.tactics import round_seed

INVESTIGATORS = ("prior", "random", "oracle")
#: The campaigns the figures are reported on; the operator's knobs were chosen on 200-219.
REPORTED_CAMPAIGNS = range(300, 320)
#: The second half of a 10-round campaign (rounds 6-10, 1-based): where the target applies
#: (a shorter campaign, `--quick`, reports its last round).
LATE_ROUNDS = slice(5, 10)
PRIOR_LATE_TARGET = 0.40
PERFECT_TARGET = 0.85


def _play_prior(ep: Episode) -> None:
    version = unknown_operator_version(ep.task)
    weights = version.as_rule_weights()
    yields = trace_yields.prior(ep.task, None)

    def scorer(episode: Episode, obs: PlainObservation, starting: list[str]):
        return rules.score_observation(obs, starting, weights, yields)

    play_episode(ep, scorer=scorer, pivot_yields=yields)


def play_campaign(task: str, campaign: int, rounds: int, investigator: str) -> dict[str, Any]:
    """One adaptive campaign in-process: per round the playbook, survival, win and reason."""
    state: OperatorState = opening(task, campaign)
    rows = []
    for _ in range(rounds):
        t0 = time.process_time()
        ep = Episode.for_adaptive_round(state)
        gen_s = time.process_time() - t0
        if investigator == "prior":
            _play_prior(ep)
        else:
            play_policy(investigator, ep)
        flagged = ep.observation()["flagged_ids"]
        t0 = time.process_time()
        report, nxt = after_round(state, ep.network, flagged)
        move_s = time.process_time() - t0
        assert ep.operator_next == nxt  # the engine's own debrief decided the same move
        rows.append(
            {
                "round": state.round,
                "won": bool(ep.grader()["won"]),
                "survival": report.survival,
                "playbook": report.playbook,
                "cost": report.cost,
                "reason": report.reason,
                "generate_s": gen_s,
                "move_s": move_s,
            }
        )
        state = nxt
    return {"task": task, "campaign": campaign, "investigator": investigator, "rounds": rows}


def _perfect_on(task: str, campaign: int, k: int, playbook: dict[str, float]) -> bool:
    from fakegang_env.tactics import Playbook

    ep = Episode(task, round_seed(task, campaign, k), tactics=Playbook("adaptive", playbook))
    return bool(play_on(ep, "perfect_pivoting")["won"])


def _spread(playbooks: list[dict[str, float]]) -> float:
    """Mean pairwise L1 distance between playbooks over the spendable channels."""
    pairs = list(combinations(playbooks, 2))
    if not pairs:
        return 0.0
    dist = [sum(abs(a[c] - b[c]) for c in SPENDABLE) for a, b in pairs]
    return round(statistics.fmean(dist), 3)


def _job(args: tuple[str, int, int, str]) -> dict[str, Any]:
    return play_campaign(*args)


def _perfect_job(args: tuple[str, int, int, dict[str, float]]) -> bool:
    return _perfect_on(*args)


def calibrate(task: str, campaigns: list[int], rounds: int, workers: int) -> dict[str, Any]:
    jobs = [(task, c, rounds, inv) for inv in INVESTIGATORS for c in campaigns]
    with ProcessPoolExecutor(workers) as pool:
        played = list(pool.map(_job, jobs))
        by = {inv: [p for p in played if p["investigator"] == inv] for inv in INVESTIGATORS}
        reached = [
            (task, p["campaign"], r["round"], r["playbook"])
            for p in by["prior"]
            for r in p["rounds"]
        ]
        perfect = list(pool.map(_perfect_job, reached))
    out: dict[str, Any] = {"task": task, "campaigns": [campaigns[0], campaigns[-1]],
                           "rounds": rounds, "budget": BUDGET, "investigators": {}}  # fmt: skip
    for inv, runs in by.items():
        curve = [
            round(statistics.fmean(r["rounds"][k]["won"] for r in runs), 3) for k in range(rounds)
        ]
        survival = [
            round(statistics.fmean(r["rounds"][k]["survival"] for r in runs), 3)
            for k in range(rounds)
        ]
        out["investigators"][inv] = {
            "win_curve": curve,
            "win_late": round(statistics.fmean(curve[LATE_ROUNDS] or curve[-1:]), 3),
            "survival_curve": survival,
            "spread_first": _spread([r["rounds"][0]["playbook"] for r in runs]),
            "spread_last": _spread([r["rounds"][-1]["playbook"] for r in runs]),
            "max_cost": max(r2["cost"] for r in runs for r2 in r["rounds"]),
        }
    out["perfect_pivoting_on_prior_playbooks"] = round(sum(perfect) / len(perfect), 3)
    times = [r for p in played for r in p["rounds"]]
    out["generate_ms_median"] = round(1000 * statistics.median(r["generate_s"] for r in times), 2)
    out["move_ms_median"] = round(1000 * statistics.median(r["move_s"] for r in times), 2)
    out["example_reasons"] = [r["reason"] for r in by["prior"][0]["rounds"]]
    out["targets"] = {
        "prior_late_at_most": PRIOR_LATE_TARGET,
        "perfect_at_least": PERFECT_TARGET,
        "prior_late_met": out["investigators"]["prior"]["win_late"] <= PRIOR_LATE_TARGET,
        "perfect_met": out["perfect_pivoting_on_prior_playbooks"] >= PERFECT_TARGET,
        "oracle_all": all(x == 1.0 for x in out["investigators"]["oracle"]["win_curve"]),
    }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="hard,medium")
    p.add_argument("--campaigns", type=seed_range, default=REPORTED_CAMPAIGNS)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    results = [
        calibrate(t, list(args.campaigns), args.rounds, args.workers) for t in args.tasks.split(",")
    ]
    if args.json:  # keep_campaign.py keeps it for the docs (name adaptive-calibration)
        print(json.dumps({"tasks": results}))
        return 0
    for res in results:
        print(f"{res['task']} adaptive, campaigns {res['campaigns'][0]}-{res['campaigns'][1]}, "
              f"{res['rounds']} rounds, budget {res['budget']}")  # fmt: skip
        for inv, r in res["investigators"].items():
            print(f"  {inv:8s} win/round {r['win_curve']}  late {r['win_late']:.2f}")
            print(f"  {'':8s} survival  {r['survival_curve']}  spread {r['spread_first']} -> "
                  f"{r['spread_last']}  max cost {r['max_cost']}")  # fmt: skip
        print(f"  perfect_pivoting on the playbooks prior met: "
              f"{res['perfect_pivoting_on_prior_playbooks']:.2f}")  # fmt: skip
        print(f"  generate a round {res['generate_ms_median']} ms, decide a move "
              f"{res['move_ms_median']} ms (CPU, medians)")  # fmt: skip
        for line in res["example_reasons"]:
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
