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
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from fakegang.cli.train import parse_seed_range
from fakegang.runs.campaign import summarise
from fakegang.tools.learning import experience, trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules.engine import score_observation
from fakegang.tools.rules.player import play_episode
from fakegang_env.engine import Episode
from fakegang_env.schema import PlainObservation
from fakegang_env.tactics import campaign_schedule


def play(
    ep: Episode, weights: dict | None, yields: Mapping[str, float] | None = None
) -> tuple[PlainObservation, list[str]]:
    """One episode scored with `weights`, played by the in-process rule player (the graph's
    action cap, 3 actions per budget step); `yields` (the pinned trace yields) turn pivots on."""
    played = play_episode(
        ep,
        scorer=lambda _ep, obs, start: score_observation(obs, start, weights, yields),
        pivot_yields=yields,
    )
    return played["observation"], played["starting_ids"]


def campaign(task: str, tactics: str, c: int, rounds: int, mode: str, db_dir: str) -> dict:
    memory = Memory(Path(db_dir) / f"{mode}-{c}.sqlite")
    # as the graph pins: learning starts from the unknown operator's model, static is shipped
    weights = (
        experience.latest_version(memory, task).as_rule_weights() if mode == "learning" else None
    )
    yields = trace_yields.prior(task, None)
    out = {"task": task, "tactics": tactics, "campaign": c, "mode": mode, "rounds": []}
    for spec in campaign_schedule(task, c, rounds, tactics):
        ep = Episode.for_round(task, c, spec.round, tactics)
        obs, starting = play(ep, weights, yields)
        pivots: dict[str, int] = {}
        for p in obs.pivots:
            pivots[p.trace] = pivots.get(p.trace, 0) + 1
        out["rounds"].append(
            {
                "round": spec.round,
                "regime": spec.regime,
                "won": obs.message.startswith("[WIN]"),
                "grader_score": obs.grader_score or 0.0,
                "actions": obs.action_count,
                "llm_calls": 0,
                "pivots": pivots,
            }
        )
        if mode == "learning":
            ring = set(obs.ring_ids or [])
            rows = experience.labelled_rows(
                obs, starting, ring, weights or experience.load_weights()
            )
            thread = f"c{c}-r{spec.round}"
            experience.store_experience(memory, task, thread, rows)
            version = experience.refit_task(memory, task, thread)
            weights = version.as_rule_weights()
            judged = trace_yields.judge_pivots(obs.pivots, ring)
            yields = trace_yields.record(memory, task, thread, judged, version.tactics)
    memory.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="hard")
    parser.add_argument("--tactics", default="mixed")
    parser.add_argument("--campaigns", type=parse_seed_range, default=[0, 1, 2, 3])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", help="write the summary JSON here")
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in args.campaigns:
            for mode in ("static", "learning"):
                results.append(campaign(args.task, args.tactics, c, args.rounds, mode, tmp))
            wins = {
                r["mode"]: "".join("W" if x["won"] else "." for x in r["rounds"])
                for r in results[-2:]
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
    print(json.dumps(summary))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
