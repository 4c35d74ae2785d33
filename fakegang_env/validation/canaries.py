"""Canary trajectories shipped with the package (`canaries.json`): record them, replay them.

Each canary is a real trajectory of the engine: its task, seed, actions and the reward served
after every action in both reward modes (`shaped`, the default, and `grader`, the channel the
manifest declares). Per task there are wins (the oracle policy, and its pivoting variant, so
the `pivot` action's costs are pinned too) and losses that try to game the reward:
`submit_at_once` (the do-nothing floor) and `flag_everything` (flag every visible account after
one network investigation). Replaying one over `/ws` must give back exactly the
recorded rewards; the losses must stay far below the top of the reward range.

    python -m fakegang_env.validation.canaries record            # rewrite canaries.json
    python -m fakegang_env.validation.canaries check --url URL   # replay against a server
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fakegang_env.engine import Episode
from fakegang_env.policies import OraclePolicy, play_recorded
from fakegang_env.tasks import TASK_NAMES
from fakegang_env.validation.wire import WsSession, action_dict

CANARIES_PATH = Path(__file__).resolve().parent / "canaries.json"
CANARY_SCHEMA_VERSION = 1
CANARY_SEED = 7  # any seed works; one fixed seed keeps the file small and reviewable
Action = tuple[str, str | None] | tuple[str, str | None, str | None]


def _oracle_actions(episode: Episode) -> list[Action]:
    return play_recorded(episode, OraclePolicy(episode.network))


def _pivoting_oracle_actions(episode: Episode) -> list[Action]:
    return play_recorded(episode, OraclePolicy(episode.network, pivots=True))


def _flag_everything_actions(episode: Episode) -> list[Action]:
    first = episode.observation()["visible_account_ids"][0]
    obs = episode.step("investigate_network", first)
    actions: list[Action] = [("investigate_network", first)]
    for account_id in obs["visible_account_ids"]:
        episode.step("flag", account_id)
        actions.append(("flag", account_id))
    episode.step("submit", None)
    return actions + [("submit", None)]


STRATEGIES = {
    "oracle": _oracle_actions,
    "pivoting_oracle": _pivoting_oracle_actions,
    "submit_at_once": lambda episode: [("submit", None)],
    "flag_everything": _flag_everything_actions,
}


def replay_in_process(task: str, seed: int, actions: list[Action]) -> dict[str, Any]:
    """Rewards (both modes) and the outcome of `actions` on a fresh engine episode."""
    episode = Episode(task, seed)
    shaped: list[float | None] = []
    for action in actions:
        shaped.append(episode.step(*action)["reward"])
    grader = episode.grader()
    if grader is None:
        raise ValueError(f"{task}/{seed}: the trajectory does not end the episode")
    graded = [0.0] * (len(actions) - 1) + [grader["score"]]
    return {
        "shaped_rewards": shaped,
        "grader_rewards": graded,
        "episode_return": episode.observation()["episode_return"],
        "grader_score": grader["score"],
        "won": grader["won"],
    }


def record(seed: int = CANARY_SEED) -> dict[str, Any]:
    """Play every strategy on every task in-process and return the canaries document."""
    canaries = []
    for task in TASK_NAMES:
        for strategy, play in STRATEGIES.items():
            actions = play(Episode(task, seed))
            outcome = replay_in_process(task, seed, actions)
            canaries.append(
                {
                    "name": f"{task}-{strategy}",
                    "task": task,
                    "seed": seed,
                    "strategy": strategy,
                    "expect": "win" if outcome["won"] else "loss",
                    "actions": [action_dict(*a) for a in actions],
                    **outcome,
                }
            )
    return {"canary_schema_version": CANARY_SCHEMA_VERSION, "canaries": canaries}


def load(path: Path = CANARIES_PATH) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("canary_schema_version") != CANARY_SCHEMA_VERSION:
        raise ValueError(f"{path}: canary_schema_version must be {CANARY_SCHEMA_VERSION}")
    return doc["canaries"]


def replay_over_ws(base_url: str, canary: dict[str, Any], reward_mode: str) -> list[Any]:
    """The rewards a server serves for the canary's actions, in one `/ws` session."""
    with WsSession(base_url) as session:
        session.reset(task=canary["task"], seed=canary["seed"], reward_mode=reward_mode)
        return [session.step(action)["reward"] for action in canary["actions"]]


def check(base_url: str, path: Path = CANARIES_PATH) -> list[str]:
    """Replay every canary in both modes; the list of mismatches (empty when all replay)."""
    problems = []
    for canary in load(path):
        for mode in ("shaped", "grader"):
            want = canary[f"{mode}_rewards"]
            got = replay_over_ws(base_url, canary, mode)
            if got != want:
                problems.append(f"{canary['name']} ({mode}): served {got}, recorded {want}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakegang_env.validation.canaries")
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="rewrite canaries.json from the engine")
    rec.add_argument("--out", type=Path, default=CANARIES_PATH)
    chk = sub.add_parser("check", help="replay canaries.json against a running server")
    chk.add_argument("--url", default="http://127.0.0.1:8000")
    args = parser.parse_args(argv)
    if args.command == "record":
        doc = record()
        args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(doc['canaries'])} canaries to {args.out}")
        return 0
    problems = check(args.url)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{len(load()) * 2 - len(problems)} of {len(load()) * 2} canary replays match")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
