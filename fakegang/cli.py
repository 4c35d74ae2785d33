"""The `fakegang` command: environment, agent, model and run-management subcommands."""

from __future__ import annotations

import argparse
import sys

from fakegang.cli_agent import add_agent_commands
from fakegang.cli_eval import add_eval_commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fakegang",
        description="Uncover rings of fake accounts: an OpenEnv environment and a LangGraph agent.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    from fakegang_env.cli import add_env_commands

    add_env_commands(sub)
    add_agent_commands(sub)
    add_eval_commands(sub)
    from fakegang.cli_llm import add_llm_commands

    add_llm_commands(sub)
    from fakegang.cli_runs import add_run_commands

    add_run_commands(sub)
    from fakegang.cli_report import add_report_commands

    add_report_commands(sub)
    from fakegang.cli_campaign import add_campaign_commands

    add_campaign_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
