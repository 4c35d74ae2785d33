"""The oracle (`openenv.yaml`: `capabilities.oracle`, form `script`): play a perfect investigation
over `/ws` and check that the served reward reaches the top of the declared range.

It knows the ring because it regenerates the episode's network from `(task, seed)` in its own
process (the generator is deterministic); the served API never exposes the ring before the end,
so an agent holds no such key. It plays `fakegang_env.policies.OraclePolicy` in the `grader`
reward mode, the channel the manifest declares (range [0, 1]); `--pivots` plays its variant
that also pivots on the ring's shared traces.

    python -m fakegang_env.validation.oracle [--url http://127.0.0.1:8000] [--seeds 0-4] [--pivots]

Prints one JSON line per episode and exits 1 if any reward is below 1 - oracle_tolerance.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from fakegang_env.arguments import seed_range
from fakegang_env.generator import generate_network
from fakegang_env.policies import OraclePolicy
from fakegang_env.tasks import TASK_NAMES
from fakegang_env.validation.wire import WsSession, action_dict

MANIFEST = Path(__file__).resolve().parent.parent / "openenv.yaml"


def declared_reward() -> dict[str, Any]:
    """The manifest's `validation.reward` block (range, oracle_tolerance, floor_margin)."""
    return yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["validation"]["reward"]


def play_oracle(base_url: str, task: str, seed: int, *, pivots: bool = False) -> dict[str, Any]:
    """One oracle episode over `/ws`; the served terminal reward and the step count."""
    policy = OraclePolicy(generate_network(task, seed), pivots=pivots)
    with WsSession(base_url) as session:
        result = session.reset(task=task, seed=seed, reward_mode="grader")
        steps = 0
        while not result["done"]:
            result = session.step(action_dict(*policy.act(result["observation"])))
            steps += 1
    return {"task": task, "seed": seed, "reward": result["reward"], "actions": steps}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakegang_env.validation.oracle")
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--seeds", type=seed_range, default=range(0, 5), help="e.g. 0-4")
    parser.add_argument("--tasks", nargs="+", choices=TASK_NAMES, default=list(TASK_NAMES))
    parser.add_argument("--pivots", action="store_true", help="play the pivoting oracle")
    args = parser.parse_args(argv)
    reward = declared_reward()
    floor = reward["range"][1] - reward["oracle_tolerance"]
    below = 0
    for task in args.tasks:
        for seed in args.seeds:
            row = play_oracle(args.url, task, seed, pivots=args.pivots)
            row["reaches_top"] = row["reward"] >= floor
            below += not row["reaches_top"]
            print(json.dumps(row))
    return 1 if below else 0


if __name__ == "__main__":
    raise SystemExit(main())
