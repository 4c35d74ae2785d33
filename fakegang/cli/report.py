"""`fakegang report RUN_ID`: HTML page and PNGs of a training run (see fakegang.report.build)."""

from __future__ import annotations

import argparse
import sys

from fakegang.cli.settings import add_setting_arguments


def missing_packages() -> list[str]:
    import importlib.util

    return [m for m in ("matplotlib", "networkx") if importlib.util.find_spec(m) is None]


def cmd_report(args: argparse.Namespace) -> int:
    missing = missing_packages()
    if missing:
        print(
            f"error: fakegang report needs {' and '.join(missing)}: "
            "pip install 'fakegang[report]' (or `make setup`)",
            file=sys.stderr,
        )
        return 2
    from fakegang.report.build import build_report
    from fakegang.report.data import ReportError, parse_episode_list

    try:
        index = build_report(
            args.run_id,
            db=args.db_path,
            out_dir=args.out,
            log_dir=args.log_dir,
            episodes=parse_episode_list(args.episodes),
            say=print,
            verbose=args.verbose,
        )
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"report written to {index}")
    return 0


def add_report_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="HTML page and PNG charts of a training run")
    p.add_argument(
        "run_id",
        help="run id (as printed by `fakegang train`), or `latest` (the latest training run)",
    )
    add_setting_arguments(p, ("db_path",))
    p.add_argument(
        "--log-dir", default=None, help="where the run's metrics.jsonl is (default: the run's own)"
    )
    p.add_argument(
        "--out", default=None, help="output directory (default: checkpoints/reports/RUN_ID)"
    )
    p.add_argument("--verbose", action="store_true", help="list each failed LLM call")
    p.add_argument(
        "--episodes",
        default=None,
        help="episodes to draw, e.g. 1,5,7-9 (default: the first win and the worst loss)",
    )
    p.set_defaults(func=cmd_report, db_writes=False)
