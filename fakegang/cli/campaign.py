"""`fakegang campaign`: the learning curve over campaigns (logic in fakegang/runs/campaign.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from fakegang.cli.eval import add_scale_arguments
from fakegang.cli.settings import EMBEDDED_ENV, add_setting_arguments
from fakegang.cli.train import parse_seed_range
from fakegang_env.tactics import CAMPAIGN_TACTICS, MAX_ROUND
from fakegang_env.tasks import TASKS


class DeprecatedAlias(argparse.Action):
    """`--db`, the old name of `--merge-into`: still works, and says it is deprecated (every
    other command's `--db` is the database it reads and writes; this one is a merge target)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"warning: {option_string} is deprecated: use --merge-into", file=sys.stderr)
        setattr(namespace, self.dest, values)


def cmd_campaign(args: argparse.Namespace) -> int:
    from fakegang.runs.campaign import write_outputs
    from fakegang.runs.campaign_sweep import CampaignError, CampaignFailed, run_campaigns
    from fakegang.tools.models.chat_models import ModelConfigError, ModelSettings, make_chat_model

    if args.model.startswith("expert:") and args.env_url:
        print(
            "error: --model expert:P reads the embedded environment: drop --env-url",
            file=sys.stderr,
        )
        return 2
    try:
        make_chat_model(ModelSettings(spec=args.model))
    except ModelConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    default_workers = os.cpu_count() or 1 if args.backend == "ray" else 1
    try:
        summary = run_campaigns(
            task=args.task,
            tactics=args.tactics,
            campaigns=list(args.campaigns),
            rounds=args.rounds,
            model=args.model,
            compare=args.compare,
            modes=args.modes,
            db=args.db,
            from_db=args.from_db,
            env_url=args.env_url,
            alpha_rule=args.alpha_rule,
            concurrency=args.concurrency or default_workers,
            backend=args.backend,
            address=args.address,
            progress=not args.no_progress,
        )
    except CampaignError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CampaignFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.out:
        json_path, png_path = write_outputs(summary, args.out)
        print(f"wrote {json_path} and {png_path}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary))
    else:
        for mode, auc in summary["auc"].items():
            curve = " ".join(f"{v:.2f}" for v in summary["curves"][mode])
            share = summary["llm_call_share"][mode]
            print(f"{mode:8s} AUC {auc:.3f} | LLM calls {share:.1%} of actions | {curve}")
        if "learning_minus_prior" in summary:
            print(f"learning - prior: {summary['learning_minus_prior']:+.3f} AUC")
        for mode, seen in summary.get("operator", {}).items():
            survival = " ".join(f"{v:.2f}" for v in seen["survival"])
            print(f"operator vs {mode}: survival {survival}")
    return 0


def _modes(text: str) -> list[str]:
    from fakegang.runs.campaign import MODES

    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise argparse.ArgumentTypeError(
            f"--modes takes a comma-separated list of {', '.join(MODES)}, got {text!r}"
        )
    return modes


def _rounds(text: str) -> int:
    try:
        n = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--rounds must be a whole number, got {text!r}") from exc
    if not 1 <= n <= MAX_ROUND + 1:
        raise argparse.ArgumentTypeError(f"--rounds must be between 1 and {MAX_ROUND + 1}, got {n}")
    return n


def add_campaign_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("campaign", help="play campaigns and draw the learning curve")
    p.add_argument("--task", choices=sorted(TASKS), required=True)
    p.add_argument(
        "--tactics",
        choices=CAMPAIGN_TACTICS,
        default="mixed",
        help="the operator: a named generation, mixed (random switches) or adaptive (reads the "
        "takedowns; see `fakegang env tactics`)",
    )
    p.add_argument("--campaigns", type=parse_seed_range, default=[0], help="A-B inclusive")
    p.add_argument("--rounds", type=_rounds, default=10)
    add_setting_arguments(
        p,
        ("env_url", "model", "alpha_rule"),
        overrides={
            "env_url": EMBEDDED_ENV,
            "model": (
                "fake",
                "a campaign plays hundreds of episodes, which the local model would take hours "
                "over on a CPU",
            ),
        },
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="play every mode: static, prior (the learning agent's start, frozen), learning, "
        "oracle",
    )
    p.add_argument(
        "--modes",
        type=_modes,
        help="comma-separated modes to play instead (static, prior, learning, oracle); default "
        "learning",
    )
    p.add_argument(
        "--merge-into",
        dest="db",
        metavar="DB",
        help="merge every round into DB (runs, replay, report) and keep each campaign's own "
        "memory as DB-<mode>-c<N>.sqlite",
    )
    p.add_argument(
        "--db",
        dest="db",
        metavar="DB",
        action=DeprecatedAlias,
        help="deprecated alias of --merge-into (a campaign reads no DB: it merges into one)",
    )
    p.add_argument("--from-db", help="start every campaign from a copy of this memory")
    add_scale_arguments(p, unit="campaigns (x modes with --compare)")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--out", help="directory for campaign.json and campaign.png")
    p.set_defaults(func=cmd_campaign)
