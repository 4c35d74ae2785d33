"""`fakegang train`: play a curriculum of episodes and learn from each debrief."""

from __future__ import annotations

import argparse
import sys

from fakegang.cli.settings import EMBEDDED_ENV, add_setting_arguments, context_from_args
from fakegang_env.arguments import seed_range
from fakegang_env.tactics import TACTICS_NAMES
from fakegang_env.tasks import TASK_NAMES


def parse_seed_range(text: str) -> list[int]:
    """`A-B` (inclusive) or a single seed `N`, as the environment CLI reads it."""
    return list(seed_range(text))


class PauseBeforeAction(argparse._StoreAction):
    """`--pause-before`, whose help lists the graph's nodes from their specs (graph/nodes/).
    Built when the help is shown: importing the graph takes seconds every other command skips."""

    @property
    def help(self) -> str:
        from fakegang.graph.nodes import NODES

        nodes = "; ".join(f"{spec.name} ({spec.panel})" for spec in NODES)
        return (
            f"stop before NODE at every step, a node of the episode graph: {nodes}. Enter "
            "continues, q (or end of input) leaves a paused run for `fakegang resume`"
        )

    @help.setter
    def help(self, _value: str | None) -> None:
        pass  # argparse sets the help it was given; it is built from the specs instead


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    add_setting_arguments(p, overrides={"env_url": EMBEDDED_ENV})
    p.add_argument(
        "--task",
        choices=TASK_NAMES,
        default=None,
        help="fix the task (default: curriculum easy→medium→hard)",
    )
    p.add_argument("--episodes", type=int, default=50, help="episodes to play (default: 50)")
    p.add_argument("--verbose", action="store_true", help="print every action of each episode")
    p.add_argument("--log-dir", default="runs", help="directory for metrics.jsonl (default: runs/)")
    p.add_argument("--seed-offset", type=int, default=0, help="first seed of each task")
    p.add_argument(
        "--tactics",
        choices=TACTICS_NAMES,
        default=None,
        help="the ring's playbook in every episode (default: classic, and in the curriculum's "
        "hard phase an adaptive operator; see `fakegang env tactics`)",
    )
    pause = p.add_mutually_exclusive_group()
    pause.add_argument("--pause-before", metavar="NODE", default=None, action=PauseBeforeAction)
    pause.add_argument(
        "--step",
        action="store_true",
        help="advance one graph node per Enter; q (or end of input) leaves a paused run",
    )


def cmd_train(args: argparse.Namespace) -> int:
    # lazy: the graph and LangGraph take seconds to import, and `fakegang --help` needs neither
    from fakegang.graph.graph import NODE_NAMES
    from fakegang.runs.runner import TrainOptions, train
    from fakegang.tools.models.chat_models import ModelConfigError

    if args.pause_before is not None and args.pause_before not in NODE_NAMES:
        print(
            f"error: --pause-before: unknown node {args.pause_before!r} "
            f"(one of {', '.join(NODE_NAMES)})",
            file=sys.stderr,
        )
        return 2
    if args.episodes < 1:
        print("error: --episodes must be at least 1", file=sys.stderr)
        return 2
    if args.seed_offset < 0:
        print("error: --seed-offset must be >= 0", file=sys.stderr)
        return 2
    opts = TrainOptions(
        context=context_from_args(args),
        env_url=args.env_url,
        task=args.task,
        episodes=args.episodes,
        verbose=args.verbose,
        log_dir=args.log_dir,
        seed_offset=args.seed_offset,
        tactics=args.tactics,
        pause_before=args.pause_before,
        step=args.step,
    )
    try:
        train(opts)
    except ModelConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def add_agent_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", help="train the agent: a curriculum of episodes, learning from each debrief"
    )
    add_train_arguments(p)
    p.set_defaults(func=cmd_train)
