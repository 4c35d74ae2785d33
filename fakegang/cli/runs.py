"""Run management: `fakegang runs | resume | replay | fork | prune | studio`.

All of them work on the SQLite file that holds both LangGraph's checkpoints and the agent's
memory (`--db`). `runs` and `replay` only read; `resume`
and `fork` play episodes (environment and LLM calls); `prune` deletes old checkpoints.
"""

from __future__ import annotations

import argparse
import sys

from fakegang.cli.settings import EMBEDDED_ENV, MODEL_SETTINGS, add_setting_arguments

#: What `studio` hands to the graph: the model settings, the α rule and whether its runs learn.
STUDIO_SETTINGS = (*MODEL_SETTINGS, "alpha_rule", "learn")


def _db(p: argparse.ArgumentParser) -> None:
    add_setting_arguments(p, ("db_path",))


def _env(p: argparse.ArgumentParser) -> None:
    add_setting_arguments(p, ("env_url",), overrides={"env_url": EMBEDDED_ENV})


def _fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def cmd_runs(args: argparse.Namespace) -> int:
    from fakegang.runs.runs import RunsError, collect_runs, format_runs

    try:
        runs = collect_runs(args.db_path, args.run_id)
    except RunsError as exc:
        return _fail(str(exc))
    print(format_runs(runs, show_pending=args.show_pending))
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from fakegang.runs.fork import ForkError
    from fakegang.runs.resume import ResumeError, resume_run
    from fakegang.runs.runs import RunsError

    try:
        resume_run(args.run_id, db=args.db_path, env_url=args.env_url, no_pause=args.no_pause)
    except (RunsError, ResumeError, ForkError) as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from fakegang.runs.replay import ReplayError, replay

    try:
        replay(args.db_path, args.thread_id, step=args.step)
    except ReplayError as exc:
        return _fail(str(exc))
    return 0


def cmd_fork(args: argparse.Namespace) -> int:
    from fakegang.graph.recovery import RebuildError
    from fakegang.runs.fork import ForkError, fork_episode

    try:
        fork_episode(
            args.db_path, args.thread_id, at=args.at, action=args.action, env_url=args.env_url
        )
    except (ForkError, RebuildError) as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from fakegang.runs.prune import PruneError, format_report, prune

    try:
        report = prune(args.db_path, args.keep_last)
    except PruneError as exc:
        return _fail(str(exc))
    print(format_report(report, args.db_path))
    return 0


def cmd_studio(args: argparse.Namespace) -> int:
    from fakegang.runs.studio import StudioError, run_studio
    from fakegang_env.server.auth import InsecureBindError, check_bind

    try:
        # The dev server has no token of ours: beyond loopback only with --insecure.
        check_bind(args.host, None, args.insecure, what="LangGraph dev server")
    except InsecureBindError as exc:
        return _fail(str(exc))
    try:
        return run_studio(
            args.db_path,
            host=args.host,
            port=args.port,
            env_url=args.env_url,
            config=args.config,
            workdir=args.workdir,
            settings={name: getattr(args, name) for name in STUDIO_SETTINGS},
        )
    except StudioError as exc:
        return _fail(str(exc), 1)


def add_run_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list runs and their episodes with status")
    p.add_argument("run_id", nargs="?", default=None, help="show only this run")
    p.add_argument(
        "--show-pending", type=int, default=3, help="not-started episodes to list (default: 3)"
    )
    _db(p)
    p.set_defaults(func=cmd_runs, db_writes=False)

    p = sub.add_parser("resume", help="finish an interrupted or paused run with its settings")
    p.add_argument("run_id")
    _db(p)
    _env(p)
    p.add_argument("--no-pause", action="store_true", help="ignore the run's --pause-before/--step")
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("replay", help="play an episode back from its checkpoints (no env/LLM)")
    p.add_argument("thread_id")
    _db(p)
    p.add_argument("--step", action="store_true", help="wait for Enter between actions")
    p.set_defaults(func=cmd_replay, db_writes=False)

    p = sub.add_parser("fork", help="branch an episode at action K with another action")
    p.add_argument("thread_id")
    p.add_argument(
        "--at", type=int, required=True, metavar="K",
        help="the action to replace: #K, numbered from #0 as in replay, runs and the viewer",
    )  # fmt: skip
    p.add_argument("--action", required=True, help='the new action, e.g. "flag u_1a2b3c"')
    _db(p)
    _env(p)
    p.set_defaults(func=cmd_fork)

    p = sub.add_parser("prune", help="drop old checkpoints of finished episodes, then VACUUM")
    p.add_argument(
        "--keep-last",
        type=int,
        required=True,
        metavar="N",
        help="finished episodes (most recent) that keep their full history",
    )
    _db(p)
    p.set_defaults(func=cmd_prune)

    p = sub.add_parser("studio", help="LangGraph dev server (Studio API) on our DB, offline")
    _db(p)
    _env(p)
    add_setting_arguments(p, STUDIO_SETTINGS)
    p.add_argument("--host", default="127.0.0.1", help="bind address (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=2024, help="port (default: 2024)")
    p.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-loopback --host (the dev server has no token: private networks only)",
    )
    p.add_argument("--config", default=None, help="langgraph.json (default: the project's)")
    p.add_argument(
        "--workdir",
        default=None,
        help="dev server state dir (default: studio/ in the project's state directory, "
        "checkpoints/)",
    )
    p.set_defaults(func=cmd_studio)
