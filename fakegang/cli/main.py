"""The `fakegang` command: environment, agent, model and run-management subcommands."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from fakegang.cli.eval import add_eval_commands
from fakegang.cli.train import add_agent_commands
from fakegang_env.arguments import quiet_on_broken_pipe


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line (the error and where the help is) instead of
    the whole usage block; exit code 2 as argparse's. Subcommand parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
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
    from fakegang.cli.view import add_view_commands

    add_view_commands(sub)
    return parser


def check_db_argument(args: argparse.Namespace) -> int | None:
    """Every command with `--db` checks the file before it opens it: exit code 2 and one line
    when the file is damaged or not ours (`fakegang/database_check.py`), nothing written; a
    command that writes (all but those that set `db_writes=False`) also needs the file and its
    folder writable, and `--log-dir` when it has one."""
    if getattr(args, "checks_own_db", False):
        return None
    from fakegang.tools.memory.database_check import preflight
    from fakegang.tools.memory.writable import folder_problem

    writes = getattr(args, "db_writes", True)
    problem = preflight(getattr(args, "db_path", None) or getattr(args, "db", None), writes=writes)
    if problem is None and writes and getattr(args, "log_dir", None):
        problem = folder_problem(args.log_dir, "--log-dir")
    if problem is None:
        return None
    print(f"error: {problem}", file=sys.stderr)
    return 2


def check_env_url_argument(args: argparse.Namespace) -> int | None:
    """With `--env-url`, ask the server once, before any run is created, whether it answers
    and accepts our token (sent from `$FAKEGANG_ENV_TOKEN`): an unreachable server or a 401
    ends here in one line with exit code 2 instead of a traceback in the first episode."""
    url = getattr(args, "env_url", None)
    if not url:
        return None
    import httpx

    from fakegang.tools.env_client import TOKEN_ENV, EnvClient

    try:
        with EnvClient(url, timeout_s=10.0, retries=0) as client:
            status = client.probe("/tasks")
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        print(
            f"error: no environment server answers at {url} ({reason}): start one with "
            "`fakegang env serve`, or leave out --env-url to use an embedded one",
            file=sys.stderr,
        )
        return 2
    if status != 401:
        return None
    print(
        f"error: the environment server at {url} refused the request (401): set ${TOKEN_ENV} "
        "to the token it was started with",
        file=sys.stderr,
    )
    return 2


def check_settings(args: argparse.Namespace) -> int | None:
    """The run settings as the command will use them (flags over environment variables) are
    checked once, like a bad flag: exit code 2 and one line naming the setting."""
    from fakegang.cli.settings import context_from_args
    from fakegang.graph.context import Context

    if not any(hasattr(args, name) for name in Context.__dataclass_fields__):
        return None
    try:
        context_from_args(args)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return None


def main(argv: list[str] | None = None, *, standalone: bool | None = None) -> int:
    """Run one command. `standalone` (default: when `argv` comes from the process, i.e. the
    `fakegang` script or `python -m fakegang.cli.main`): this command is the whole process,
    which then ends within a few seconds after a Ctrl-C (fakegang/cli/interrupt.py)."""
    from fakegang.cli.interrupt import INTERRUPTED, exit_within_grace, run_interruptible

    try:
        parser = build_parser()  # option defaults read the settings' environment variables
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    for check in (check_settings, check_db_argument, check_env_url_argument):
        refused = check(args)
        if refused is not None:
            return refused
    code = run_interruptible(lambda: quiet_on_broken_pipe(lambda: int(args.func(args) or 0)))
    if code == INTERRUPTED and (argv is None if standalone is None else standalone):
        exit_within_grace(code)  # the caller exits now; a held-up exit is ended for it
    return code


if __name__ == "__main__":
    sys.exit(main())
