"""`fakegang eval`: play seeds with the current memory, read-only."""

from __future__ import annotations

import argparse
import json

from fakegang.cli_agent import parse_seed_range
from fakegang_env.tasks import TASK_NAMES


def cmd_eval(args: argparse.Namespace) -> int:
    from fakegang.graph.evaluation import evaluate

    summary = evaluate(
        task=args.task, seeds=args.seeds, model=args.model, db=args.db, env_url=args.env_url
    )
    if args.json:
        print(json.dumps({k: v for k, v in summary.items() if k != "results"}))
    else:
        for r in summary["results"]:
            print(f"  seed {r['seed']:3d}: {r['final_message']}  (grader {r['grader_score']:.3f})")
        print(
            f"{summary['task']}: {summary['episodes']} episodes, win rate "
            f"{summary['win_rate']:.0%}, mean grader {summary['mean_grader']:.3f}, mean steps "
            f"{summary['mean_steps']:.1f}, LLM calls {summary['llm_calls']} ({summary['model']})"
        )
    return 0


def add_eval_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="play seeds with the current memory, read-only")
    p.add_argument("--task", choices=TASK_NAMES, required=True)
    p.add_argument("--seeds", type=parse_seed_range, required=True, help="A-B inclusive")
    p.add_argument("--model", default="local")
    p.add_argument("--db", default="checkpoints/fakegang.sqlite")
    p.add_argument("--env-url", default=None)
    p.add_argument("--json", action="store_true", help="print one JSON summary object")
    p.set_defaults(func=cmd_eval)
