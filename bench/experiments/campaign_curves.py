"""Learning curves of the rule engine with and without learning, in-process (no server, no graph).

Why in-process: `fakegang campaign --compare` plays every round through the graph and the HTTP
server, so sweeping campaigns x tasks x settings there takes hours on this 2-core machine. With
`--model fake` the credit rule keeps α at its floor (0.20), so the agent's actions are the rule
engine's: this script plays that same policy (`propose` with the pinned weights and trace
yields, pivots included) and learns with the same code after each round as the graph's `reflect`
(`tools/learning/experience.py`: labelled rows, MAP refit, versions; `trace_yields.py`: pivots
judged by the debrief). Static rounds use the shipped weights and the shipped yields. LLM call
shares are not measured here (use `fakegang campaign`).

    python bench/experiments/campaign_curves.py --task hard --tactics mixed --campaigns 0-19 \
        --rounds 10
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from fakegang.cli.train import parse_seed_range
from fakegang.runs.campaign import adaptive_regimes, summarise
from fakegang.tools.learning import experience, trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules.engine import score_observation
from fakegang.tools.rules.player import Hook, play_episode
from fakegang_env.engine import Episode
from fakegang_env.operator import after_round, opening
from fakegang_env.schema import PlainObservation
from fakegang_env.tactics import ADAPTIVE, campaign_schedule


def play(
    ep: Episode,
    weights: dict | None,
    yields: Mapping[str, float] | None = None,
    on_step: Hook | None = None,
) -> tuple[PlainObservation, list[str]]:
    """One episode scored with `weights`, played by the in-process rule player (the graph's
    action cap, 3 actions per budget step); `yields` (the pinned trace yields) turn pivots on;
    `on_step` sees every decision."""
    played = play_episode(
        ep,
        on_step,
        scorer=lambda _ep, obs, start: score_observation(obs, start, weights, yields),
        pivot_yields=yields,
    )
    return played["observation"], played["starting_ids"]


#: How a round is played: (episode, pinned weights, pinned yields) -> final observation, starting
#: ids; `play` unless an experiment tries another policy (bench/experiments/second_hypothesis.py).
Player = Callable[
    [Episode, dict | None, Mapping[str, float] | None], tuple[PlainObservation, list[str]]
]


def campaign(
    task: str, tactics: str, c: int, rounds: int, mode: str, db_dir: str, player: Player = play
) -> dict:
    """One campaign in one mode: `static` (shipped weights), `prior` (learning's starting point,
    frozen) or `learning` (after each round: labelled rows, the pinned model's errors for the
    drift test, refit, learner, yields, as `reflect` does). An adaptive campaign's next playbook
    comes from the operator's reading of this round's takedowns."""
    memory = Memory(Path(db_dir) / f"{mode}-{task}-{tactics}-{c}.sqlite")
    # as the graph pins: learning and prior start from the unknown operator's model
    weights = (
        None if mode == "static" else experience.latest_version(memory, task).as_rule_weights()
    )
    yields = trace_yields.prior(task, None)
    out = {"task": task, "tactics": tactics, "campaign": c, "mode": mode, "rounds": []}
    adaptive = tactics == ADAPTIVE
    operator = opening(task, c) if adaptive else None
    regimes = (
        {} if adaptive else {s.round: s.regime for s in campaign_schedule(task, c, rounds, tactics)}
    )
    for k in range(rounds):
        ep = (
            Episode.for_adaptive_round(operator)
            if adaptive
            else Episode.for_round(task, c, k, tactics)
        )
        obs, starting = player(ep, weights, yields)
        pivots: dict[str, int] = {}
        for p in obs.pivots:
            pivots[p.trace] = pivots.get(p.trace, 0) + 1
        row = {
            "round": k,
            "regime": regimes.get(k, 0),
            "won": obs.message.startswith("[WIN]"),
            "grader_score": obs.grader_score or 0.0,
            "actions": obs.action_count,
            "llm_calls": 0,
            "pivots": pivots,
        }
        if adaptive:
            report, operator = after_round(operator, ep.network, obs.flagged_ids)
            row["operator"] = report.to_dict()
        out["rounds"].append(row)
        if mode == "learning":
            weights, yields = learn(memory, task, f"c{c}-r{k}", obs, starting, weights)
    if adaptive:
        adaptive_regimes(out["rounds"])
    memory.close()
    return out


def learn(memory: Memory, task: str, thread: str, obs, starting: list[str], weights: dict):
    """What `reflect` learns from one debrief; returns the weights and yields the next round
    pins."""
    ring = set(obs.ring_ids or [])
    rows = experience.labelled_rows(obs, starting, ring, weights)
    errors = experience.pinned_errors(weights, rows)
    experience.store_experience(memory, task, thread, rows)
    version = experience.refit_task(memory, task, thread, errors)
    judged = trace_yields.judge_pivots(obs.pivots, ring)
    yields = trace_yields.record(memory, task, thread, judged, version.tactics)
    pinned = experience.get_version(memory, task, version.version)  # as a new episode pins it
    return pinned.as_rule_weights(), yields


def _job(args: tuple) -> dict:
    return campaign(*args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="hard")
    parser.add_argument("--tactics", default="mixed")
    parser.add_argument("--campaigns", type=parse_seed_range, default=[0, 1, 2, 3])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--modes", default="static,learning", help="of static, prior, learning")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="write the summary JSON here")
    args = parser.parse_args()
    modes = args.modes.split(",")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [
            (args.task, args.tactics, c, args.rounds, m, tmp) for c in args.campaigns for m in modes
        ]
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(_job, jobs))
    for c in args.campaigns:
        wins = {
            r["mode"]: "".join("W" if x["won"] else "." for x in r["rounds"])
            for r in results
            if r["campaign"] == c
        }
        print(f"campaign {c}: {wins}", flush=True)
    summary = summarise(
        results,
        task=args.task,
        tactics=args.tactics,
        campaigns=list(args.campaigns),
        rounds=args.rounds,
        model="rules (fake)",
    )
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    summary["command"] = "python bench/experiments/campaign_curves.py " + " ".join(sys.argv[1:])
    summary["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    summary["machine"] = f"{os.cpu_count()} cores, CPython {platform.python_version()}"
    print(json.dumps({k: summary[k] for k in ("curves", "auc", "seconds")}))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
