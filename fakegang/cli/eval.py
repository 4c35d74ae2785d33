"""`fakegang eval`: play seeds with the current memory, read-only (optionally N at a time)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from fakegang.cli.settings import EMBEDDED_ENV, add_setting_arguments
from fakegang.cli.train import parse_seed_range
from fakegang_env.arguments import positive
from fakegang_env.tactics import TACTICS_NAMES
from fakegang_env.tasks import TASK_NAMES


def cmd_eval(args: argparse.Namespace) -> int:
    from fakegang.runs.backends import Plan, warm_up

    concurrency = args.concurrency or (os.cpu_count() or 1 if args.backend == "ray" else 1)
    # worker processes: the forkserver imports the agent while this process does the same
    warm_up(Plan(backend=args.backend, concurrency=concurrency))
    from fakegang.runs.evaluation import EvalError, evaluate

    try:
        summary = evaluate(
            task=args.task,
            seeds=args.seeds,
            model=args.model,
            db=args.db_path,
            env_url=args.env_url,
            concurrency=concurrency,
            backend=args.backend,
            address=args.address,
            out=args.out,
            progress=not args.no_progress,
            tactics=args.tactics,
        )
    except EvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({k: v for k, v in summary.items() if k != "results"}))
    else:
        for r in summary["results"]:
            if "error" in r:
                print(f"  seed {r['seed']:3d}: ERROR {r['error']}")
            else:
                print(
                    f"  seed {r['seed']:3d}: {r['final_message']}  (grader {r['grader_score']:.3f})"
                )
        print(
            f"{summary['task']}: {summary['episodes']} episodes, win rate "
            f"{summary['win_rate']:.0%}, mean grader {summary['mean_grader']:.3f}, mean steps "
            f"{summary['mean_steps']:.1f}, LLM calls {summary['llm_calls']} ({summary['model']}, "
            f"{summary['backend']})"
        )
        for line in _llm_failures(args.db_path, summary["run_id"]):
            print(f"LLM: {line}")
        if args.out:
            print(f"rows written to {args.out}")
    if summary["errors"]:
        print(f"error: {summary['errors']} episode(s) failed (see the rows)", file=sys.stderr)
        return 1
    return 0


def _llm_failures(db: str, run_id: str) -> list[str]:
    """The evaluation's failed LLM calls, one line per error class (runs/llm_failures.py)."""
    from fakegang.runs.llm_failures import run_llm_failures
    from fakegang.tools.memory.store import Memory

    memory = Memory(db)
    try:
        return run_llm_failures(memory.db, run_id).lines()
    finally:
        memory.close()


def add_scale_arguments(p: argparse.ArgumentParser, *, unit: str) -> None:
    """`--concurrency`, `--backend`, `--address` (shared by `eval` and `campaign`)."""
    p.add_argument(
        "--concurrency",
        type=positive(int),
        default=None,
        help=f"{unit} played at once, in worker processes (default 1); with --backend ray the "
        "CPUs of the local Ray instance (default: all cores)",
    )
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help='local (this machine) or ray (needs pip install "fakegang[ray]")',
    )
    p.add_argument(
        "--address",
        default=None,
        help="with --backend ray: join this Ray cluster (auto, or the head's host:port) "
        "instead of starting a local instance",
    )


def add_eval_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="play seeds with the current memory, read-only")
    p.add_argument("--task", choices=TASK_NAMES, required=True)
    p.add_argument("--seeds", type=parse_seed_range, required=True, help="A-B inclusive")
    p.add_argument(
        "--tactics",
        choices=TACTICS_NAMES,
        default="classic",
        help="the ring's playbook on every seed (default classic; see `fakegang env tactics`)",
    )
    add_setting_arguments(p, ("db_path", "env_url", "model"), overrides={"env_url": EMBEDDED_ENV})
    add_scale_arguments(p, unit="episodes")
    p.add_argument("--out", default=None, help="write one JSON row per episode to this file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON summary object")
    p.set_defaults(func=cmd_eval)
