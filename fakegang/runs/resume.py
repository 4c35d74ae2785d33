"""`fakegang resume RUN_ID`: finish an interrupted or paused run with its own settings.

The run's options are read back from `runs.settings`, so the schedule (episode numbers, tasks,
seeds) and the thread ids (uuid5 of run id and episode number) are the ones of the original
run. The unfinished episode continues from its last checkpoint (`invoke(None, cfg)`, which
re-runs the node that was cut short), the episodes after it are played as usual, and the
per-episode lines and metrics.jsonl are those the uninterrupted run would have printed.

Environment: `--env-url` if given, else the run's own server if it still answers, else an
embedded one. A server that lost the episode answers 404 and `step_env` rebuilds it from the
recorded actions (graph/recovery.py); a server that kept it answers a repeated action index from
its cache, so no action is applied twice.
"""

from __future__ import annotations

import sys
from typing import TextIO

from fakegang.graph import resources
from fakegang.graph.graph import compile_with_sqlite
from fakegang.runs.fork import resume_fork
from fakegang.runs.pausing import PauseControl
from fakegang.runs.records import RunRecords
from fakegang.runs.runner import (
    ProgressPrinter,
    ShutdownGuard,
    TrainOptions,
    claim_run,
    context_for,
    environment,
    play_schedule,
)
from fakegang.runs.runs import collect_runs
from fakegang.tools.env_client import EnvClient
from fakegang.tools.memory.store import Memory
from fakegang.tools.models.chat_models import describe_model


class ResumeError(RuntimeError):
    """The run cannot be resumed (unknown, finished, or still running)."""


def server_alive(url: str) -> bool:
    client = EnvClient(url, timeout_s=3.0, retries=0)
    try:
        return client.health()
    finally:
        client.close()


def choose_env_url(requested: str | None, original: str | None, printer) -> str | None:
    """`--env-url`, else the run's own server if it answers, else None (embedded server)."""
    if requested:
        return requested
    if original and server_alive(original):
        return original
    if original:
        printer.print(
            f"  (the run's server {original} does not answer: using an embedded one; episodes "
            "it lost are rebuilt from their recorded actions)"
        )
    return None


def resume_run(
    run_id: str,
    *,
    db: str,
    env_url: str | None = None,
    no_pause: bool = False,
    out: TextIO = sys.stdout,
    stdin: TextIO | None = None,
) -> dict:
    """Resume `run_id` from `db`; returns {"run_id", "metrics", "status"}."""
    runs = collect_runs(db, run_id)  # raises for an unknown db or run
    run = runs[0]
    if run.status == "running":
        probe = Memory(db)
        owner = RunRecords(probe).run_owner(run_id) or {}
        probe.close()
        raise ResumeError(
            f"run {run_id} is still being played by process {owner.get('pid')} on "
            f"{owner.get('host')}: stop it first (Ctrl-C leaves it resumable)"
        )
    if run.fork_of:
        return resume_fork(run_id, db=db, env_url=env_url, out=out)
    if run.status == "finished":
        raise ResumeError(f"run {run_id} is finished: nothing to resume")
    if run.settings.get("kind") == "campaign":
        raise ResumeError(
            f"run {run_id} is a round-by-round `fakegang campaign` run: it cannot be resumed, "
            "play the campaign again"
        )
    opts = TrainOptions.from_settings(run.settings)
    opts = opts.with_db(db)
    if no_pause:
        opts.pause_before, opts.step = None, False
    printer = ProgressPrinter(out)
    bar = "━" * 70
    pending = [e for e in run.episodes if e.status != "finished"]
    printer.print(f"\n{bar}\n  Resuming run {run_id} ({run.status})")
    printer.print(f"  Episodes       : {run.finished}/{run.episodes_total} finished")
    first = pending[0]
    printer.print(
        f"  Continue with  : episode {first.episode} ({first.task}, seed {first.seed}) "
        f"{first.outcome or 'from its start'}"
    )
    url = choose_env_url(env_url, opts.env_url, printer)
    guard = ShutdownGuard()
    with guard, environment(url) as live_url:
        ctx = context_for(opts, live_url)
        printer.print(f"  OpenEnv server : {live_url}{'' if url else ' (embedded)'}")
        printer.print(f"  LLM            : {describe_model(ctx.model_settings())}")
        printer.print(f"  Memory         : {db}\n{bar}\n")
        app = compile_with_sqlite(db)
        memory = resources.memory(ctx)
        memory.upsert_run({"run_id": run_id, "status": "running"})
        claim_run(memory, run_id)
        pause = None
        if opts.pause_before or opts.step:
            pause = PauseControl(opts.pause_before, opts.step, stdin=stdin or sys.stdin, out=out)
        path = play_schedule(app, ctx, memory, opts, run_id, printer, pause=pause)
        guard.finished = True
    with guard:
        resources.reset_all()
    status = "finished" if path else "paused"
    return {"run_id": run_id, "metrics": str(path) if path else None, "status": status}
