"""`fakegang env ...`: serve the environment, dump one episode's network, run a built-in policy.

    fakegang env serve [--host 127.0.0.1] [--port 8000]
    fakegang env tactics [--json]
    fakegang env generate --task TASK (--seed N | --campaign C --round K) [--tactics G]
    fakegang env baseline --policy random|naive|oracle --task TASK --seeds A-B [--tactics G]
                          [--pivots] [--json]

The coordinator's dispatcher (`fakegang/cli/main.py`) calls `add_env_commands(subparsers)` and then
`args.func(args)`, which returns the exit code. `python -m fakegang_env.cli ...` runs the same
commands standalone (with or without the leading `env`). Only `serve` imports OpenEnv (a
several-second import); `generate` and `baseline` run on the pure engine.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from fakegang_env.arguments import quiet_on_broken_pipe, seed_number, seed_range, task_name
from fakegang_env.server.serve_args import add_serve_arguments
from fakegang_env.tactics import CHANNELS, TACTICS_NAMES, tactics_catalog
from fakegang_env.tasks import TASK_NAMES

POLICY_NAMES = ("random", "naive", "oracle")  # checked against fakegang_env.policies in tests


# ---------------------------------------------------------------------------- commands
def cmd_serve(args: argparse.Namespace) -> int:
    from fakegang_env.server.app import serve  # imports OpenEnv: only here

    return serve(args)


def cmd_tactics(args: argparse.Namespace) -> int:
    rows = tactics_catalog()
    if args.json:
        print(json.dumps(rows))
        return 0
    short = [c.split("_")[0][:8] for c in CHANNELS]
    print(f"{'tactics':<20}" + "".join(f"{s:>9}" for s in short))
    for row in rows:
        channels = row["channels"]
        cells = (
            "".join(f"{channels[c]:>9.2f}" for c in CHANNELS)
            if channels
            else f"{'(drawn per seed, regime or round)':>{9 * len(CHANNELS)}}"
        )
        print(f"{row['name']:<20}{cells}")
        print(f"{'':<20}  {row['description']}")
    print("channels: " + ", ".join(CHANNELS) + " (1.0 = the task's classic strength)")
    from fakegang_env.trace_catalogue import trace_kinds

    print(
        "pivot traces follow channels: "
        + ", ".join(f"{k.name} <- {k.channel}" for k in trace_kinds())
    )
    from fakegang_env.evasion_budget import BUDGET, COSTS, FIXED_CHANNELS

    print(
        f"adaptive: the evasion budget per round is {BUDGET}; weakening a channel from 1 to s "
        "costs cost x (1 - s):"
    )
    for channel, price in COSTS.items():
        print(f"  {channel:<20}{price.cost:>5.2f}  {price.reason}")
    print(f"  not for sale: {', '.join(FIXED_CHANNELS)} (played at 1.0)")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from fakegang_env.generator import generate_network, network_to_dict
    from fakegang_env.tactics import campaign_round, resolve_playbook

    extra: dict[str, Any] = {}
    if args.campaign is not None or args.round is not None:
        if args.campaign is None or args.round is None:
            print("error: --campaign and --round go together", file=sys.stderr)
            return 2
        if args.seed is not None:
            print(
                "error: --seed cannot be combined with --campaign: a campaign round derives its "
                "own seed",
                file=sys.stderr,
            )
            return 2
        try:
            spec = campaign_round(args.task, args.campaign, args.round, args.tactics)
        except ValueError as exc:  # a round past the campaign's last one
            print(f"error: {exc}", file=sys.stderr)
            return 2
        seed, playbook = spec.seed, spec.playbook
        extra = {"campaign": args.campaign, "round": spec.round, "regime": spec.regime}
    elif args.seed is None:
        print("error: give --seed N (or --campaign C --round K)", file=sys.stderr)
        return 2
    else:
        seed, playbook = args.seed, resolve_playbook(args.task, args.seed, args.tactics)
    data = network_to_dict(generate_network(args.task, seed, playbook))
    print(json.dumps({**data, "tactics": playbook.to_dict(), **extra}))
    return 0


def run_baseline(
    policy: str,
    task: str,
    seeds: Sequence[int],
    tactics: str = "classic",
    *,
    pivots: bool = False,
) -> dict[str, Any]:
    """Play `policy` (its pivoting variant with `pivots`) on every seed in-process; the
    per-episode rows and their summary."""
    from fakegang_env.policies import run_policy

    rows = [run_policy(policy, task, seed, tactics, pivots=pivots) for seed in seeds]
    n = len(rows)
    return {
        "task": task,
        "policy": policy,
        "tactics": tactics,
        "pivots": pivots,
        "seeds": f"{seeds[0]}-{seeds[-1]}",
        "episodes": n,
        "win_rate": sum(1 for r in rows if r["won"]) / n,
        "mean_grader": sum(r["grader_score"] for r in rows) / n,
        "mean_steps": sum(r["steps_used"] for r in rows) / n,
        "mean_reward": sum(r["reward"] for r in rows) / n,
        "rows": rows,
    }


def _table(result: dict[str, Any]) -> str:
    head = (
        f"{'seed':>6} {'won':>4} {'grader':>7} {'steps':>5} {'reward':>8} {'tp':>3} {'fp':>3} "
        f"{'fn':>3} {'recall':>6} {'prec':>5}"
    )
    lines = [
        f"policy={result['policy']} task={result['task']} seeds={result['seeds']}"
        + (f" tactics={result['tactics']}" if result["tactics"] != "classic" else "")
        + (" pivots=on" if result.get("pivots") else ""),
        head,
        "-" * len(head),
    ]
    for r in result["rows"]:
        lines.append(
            f"{r['seed']:>6} {'yes' if r['won'] else 'no':>4} {r['grader_score']:>7.3f} "
            f"{r['steps_used']:>5} {r['reward']:>8.2f} {r['tp']:>3} {r['fp']:>3} {r['fn']:>3} "
            f"{r['recall']:>6.2f} {r['precision']:>5.2f}"
        )
    lines.append("-" * len(head))
    lines.append(
        f"episodes={result['episodes']} win_rate={result['win_rate']:.2f} "
        f"mean_grader={result['mean_grader']:.3f} mean_steps={result['mean_steps']:.1f} "
        f"mean_reward={result['mean_reward']:.2f}"
        + (
            f" mean_pivots={sum(r['pivots'] for r in result['rows']) / result['episodes']:.1f}"
            if result.get("pivots")
            else ""
        )
    )
    return "\n".join(lines)


def cmd_baseline(args: argparse.Namespace) -> int:
    result = run_baseline(
        args.policy, args.task, list(args.seeds), args.tactics, pivots=args.pivots
    )
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    else:
        print(_table(result))
    return 0


# ---------------------------------------------------------------------------- wiring
def add_env_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Register `env` and its subcommands on the dispatcher's subparsers; returns the parser."""
    env = subparsers.add_parser(
        "env",
        help="serve or exercise the fakegang OpenEnv environment",
        description="Serve the environment, dump one episode's network, run a built-in policy.",
    )
    fill_env_parser(env)
    return env


def fill_env_parser(env: argparse.ArgumentParser) -> None:
    sub = env.add_subparsers(dest="env_command", metavar="{serve,tactics,generate,baseline}")
    sub.required = True

    serve = sub.add_parser("serve", help="serve over HTTP and /ws (binds 127.0.0.1 by default)")
    add_serve_arguments(serve)
    serve.set_defaults(func=cmd_serve)

    tac = sub.add_parser("tactics", help="list the ring generations and their channel strengths")
    tac.add_argument("--json", action="store_true", help="print one JSON list")
    tac.set_defaults(func=cmd_tactics)

    gen = sub.add_parser(
        "generate", help="print one episode's network, hidden truth included, as one JSON object"
    )
    gen.add_argument("--task", type=task_name, required=True, help=" | ".join(TASK_NAMES))
    gen.add_argument("--seed", type=seed_number, default=None, help="integer >= 0")
    add_tactics_argument(gen)
    gen.add_argument(
        "--campaign", type=seed_number, default=None, help="campaign seed (with --round)"
    )
    gen.add_argument("--round", type=seed_number, default=None, help="0-based campaign round")
    gen.set_defaults(func=cmd_generate)

    base = sub.add_parser("baseline", help="run a built-in policy over a seed range in-process")
    base.add_argument("--policy", choices=POLICY_NAMES, required=True)
    base.add_argument("--task", type=task_name, required=True, help=" | ".join(TASK_NAMES))
    base.add_argument(
        "--seeds",
        type=seed_range,
        required=True,
        help="inclusive range A-B, e.g. 0-49 (or one seed N)",
    )
    add_tactics_argument(base)
    base.add_argument(
        "--pivots",
        action="store_true",
        help="play the policy's pivoting variant (it also uses the pivot action)",
    )
    base.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (task, policy, episodes, win_rate, "
        "mean_grader, mean_steps, ...) instead of a table",
    )
    base.set_defaults(func=cmd_baseline)


def add_tactics_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tactics",
        choices=TACTICS_NAMES,
        default="classic",
        help="the ring's playbook (default classic; `fakegang env tactics` lists them)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry: `python -m fakegang_env.cli [env] {serve,generate,baseline} ...`."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["env"]:
        args_in = args_in[1:]
    parser = argparse.ArgumentParser(prog="fakegang env", description=__doc__.splitlines()[0])
    fill_env_parser(parser)
    args = parser.parse_args(args_in)
    return quiet_on_broken_pipe(lambda: args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
