"""The `fakegang` command: environment, agent, model and run-management subcommands."""

from __future__ import annotations

import argparse
import sys

from fakegang.cli.eval import add_eval_commands
from fakegang.cli.train import add_agent_commands
from fakegang_env.arguments import quiet_on_broken_pipe


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
    from fakegang.cli.llm import add_llm_commands

    add_llm_commands(sub)
    from fakegang.cli.runs import add_run_commands

    add_run_commands(sub)
    from fakegang.cli.report import add_report_commands

    add_report_commands(sub)
    from fakegang.cli.db import add_db_commands

    add_db_commands(sub)

    from fakegang.cli.campaign import add_campaign_commands

    add_campaign_commands(sub)
    return parser


def check_db_argument(args: argparse.Namespace) -> int | None:
    """Every command with `--db` checks the file before it opens it: exit code 2 and one line
    when the file is damaged or not ours (`fakegang/database_check.py`), nothing written."""
    if getattr(args, "checks_own_db", False):
        return None
    from fakegang.tools.memory.database_check import preflight

    problem = preflight(getattr(args, "db_path", None) or getattr(args, "db", None))
    if problem is None:
        return None
    print(f"error: {problem}", file=sys.stderr)
    return 2


def check_env_url_argument(args: argparse.Namespace) -> int | None:
    """With `--env-url`, ask the server once whether it accepts our token (sent from
    `$FAKEGANG_ENV_TOKEN`): a 401 ends here in one line instead of in the first episode.
    An unreachable server is left to the command, which says so in its own words."""
    url = getattr(args, "env_url", None)
    if not url:
        return None
    import httpx

    from fakegang.tools.env_client import TOKEN_ENV, EnvClient

    with EnvClient(url, timeout_s=10.0, retries=0) as client:
        try:
            status = client.probe("/tasks")
        except httpx.HTTPError:
            return None
    if status != 401:
        return None
    print(
        f"error: the environment server at {url} refused the request (401): set ${TOKEN_ENV} "
        "to the token it was started with",
        file=sys.stderr,
    )
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for check in (check_db_argument, check_env_url_argument):
        refused = check(args)
        if refused is not None:
            return refused
    return quiet_on_broken_pipe(lambda: int(args.func(args) or 0))


if __name__ == "__main__":
    sys.exit(main())
