"""The driver of `fakegang campaign`: every campaign (and, with `--compare`, every campaign x mode)
is one job on a backend (fakegang/runs/backends.py: this process, `--concurrency N` worker
processes, or Ray tasks); the rounds inside a job stay sequential, since each learns from the
last. Each (campaign, mode) starts from its own fresh memory or `--from-db` copy, so the jobs are
independent and the summary equals sequential play whatever the backend and worker count.

With `--db DB`, each job's shard comes back as bytes and the driver keeps it twice:
- `DB-<mode>-c<N>.sqlite`: that campaign's memory as it ended, written whole (replacing the file
  of an earlier invocation): its learned tables (experience, weight_versions, credit, insights,
  reflections, alpha) and its rounds. This is where a campaign's learning is read (`report` on
  it shows "What the agent learned"), and where a round can be forked.
- `DB` itself: every round of every campaign and mode, merged by thread id (episodes, steps,
  observations, LangGraph checkpoints) plus each job's `runs` row (`campaign-<tag>-<mode>-c<N>`),
  so `fakegang runs`, `replay` and `report` see every round as if it had run locally. The learned
  tables are *not* merged: weight_versions are numbered per memory (and pinned by number in the
  checkpoints), insights and α are one row per task, so campaigns would overwrite each other.
  A retried job has the same thread ids and run id: its merge replaces, never duplicates.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, TextIO

from fakegang.runs.backends import BackendError, Plan, import_ray, run_jobs, warm_up
from fakegang.runs.campaign import MODES, campaign_threads, round_line, summarise
from fakegang.runs.campaign_worker import CampaignJob, CampaignOutcome, play_campaign_job
from fakegang.runs.progress import CampaignProgress
from fakegang.runs.runner import environment
from fakegang.runs.shards import ShardError, merge_shard, shard_bytes
from fakegang.runs.worker import driver_settings, remove_leftovers


class CampaignError(ValueError):
    """Bad campaign settings, found before anything is played (the message says which)."""


class CampaignFailed(RuntimeError):
    """Some campaigns failed for good; the ones that finished are kept in `--db`."""


def campaign_db_path(db: str | Path, mode: str, campaign: int) -> Path:
    """Where one campaign's own memory is kept: `DB-<mode>-c<N>.sqlite`."""
    return Path(str(Path(db).with_suffix("")) + f"-{mode}-c{campaign}.sqlite")


def starting_memory(from_db: str | Path | None) -> bytes | None:
    """The bytes every campaign starts from: a consistent copy of `from_db` (SQLite's backup,
    so a write-ahead log is included and the source is not changed), or None (fresh)."""
    if from_db is None:
        return None
    src_path = Path(from_db)
    if not src_path.is_file():
        raise CampaignError(f"--from-db {src_path}: no such file")
    with tempfile.TemporaryDirectory(prefix="fakegang-start-") as tmp:
        copy = Path(tmp) / "start.sqlite"
        try:
            src = sqlite3.connect(str(src_path), timeout=30)
            try:
                src.execute("select 1 from runs limit 1")
                dst = sqlite3.connect(str(copy))
                try:
                    src.backup(dst)
                finally:
                    dst.close()
            finally:
                src.close()
        except sqlite3.DatabaseError as exc:
            raise CampaignError(
                f"--from-db {src_path} is not a fakegang memory database: {exc}"
            ) from exc
        return shard_bytes(copy)


def _check_paths(db: str | None, from_db: str | None, modes: list[str], campaigns: list[int]):
    if not db or not from_db:
        return
    start = Path(from_db).resolve()
    kept = [Path(db)] + [campaign_db_path(db, m, c) for m in modes for c in campaigns]
    if any(p.resolve() == start for p in kept):
        raise CampaignError(
            f"--db {db} would write into --from-db {from_db}: the campaigns' rounds would become "
            "part of the memory they start from; give --db a database of its own"
        )


def _check_env(env_url: str) -> None:
    from fakegang.tools.env_client import EnvClient

    with EnvClient(env_url, timeout_s=5.0, retries=1) as client:
        if not client.health():
            raise CampaignError(f"no environment server answers at {env_url} (GET /health)")


def keep_campaign_db(db: str | Path, job: CampaignJob, data: bytes) -> None:
    """Write the job's shard as its campaign database, then merge its rounds into `db`."""
    path = campaign_db_path(db, job.mode, job.campaign)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(data)
    for suffix in ("-wal", "-shm"):  # an old file's log must not be applied to the new one
        Path(str(path) + suffix).unlink(missing_ok=True)
    os.replace(tmp, path)
    settings = {
        "task": job.task, "tactics": job.tactics, "campaign": job.campaign,
        "rounds": job.rounds, "mode": job.mode, "tag": job.tag,
    }  # fmt: skip
    threads = [tid for _, _, _, tid in campaign_threads(settings)]
    merge_shard(db, path, thread_ids=threads, run_ids=[job.run_id])


def run_campaigns(
    *,
    task: str,
    tactics: str,
    campaigns: list[int],
    rounds: int,
    model: str,
    compare: bool,
    modes: list[str] | None = None,
    db: str | None = None,
    from_db: str | None = None,
    env_url: str | None = None,
    alpha_rule: str = "credit",
    concurrency: int = 1,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
    err: TextIO | None = None,
) -> dict[str, Any]:
    """Every campaign in every requested mode as jobs on the backend, then the summary.

    Raises CampaignError before playing for bad settings, CampaignFailed after playing when a
    job failed for good (the campaigns that finished are kept in `db`)."""
    plan = Plan(backend=backend, concurrency=concurrency, address=address)
    try:
        plan.check()
        if backend == "ray":
            import_ray()
    except BackendError as exc:
        raise CampaignError(str(exc)) from exc
    if not campaigns:
        raise CampaignError("no campaigns to play")
    if compare:
        modes = list(MODES)
    elif not modes:
        modes = ["learning"]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise CampaignError(f"unknown mode {unknown[0]!r}; valid: {', '.join(MODES)}")
    modes = [m for m in MODES if m in modes]  # one order everywhere, each mode once
    _check_paths(db, from_db, modes, campaigns)
    if env_url is not None:
        _check_env(env_url)
    start = starting_memory(from_db)
    tag = uuid.uuid4().hex[:8]
    in_process = backend == "local" and concurrency == 1
    # stderr as it is at the call (a default bound at import would outlive a redirected one)
    bar = CampaignProgress(
        len(campaigns) * len(modes), rounds, f"campaign {task}", err or sys.stderr
    )
    results: dict[tuple[int, str], dict] = {}
    failures: dict[tuple[int, str], str] = {}

    def done(job: CampaignJob, outcome: CampaignOutcome | None, exc: BaseException | None):
        if outcome is not None and db and outcome.shard is not None:
            try:
                keep_campaign_db(db, job, outcome.shard)
            except (OSError, sqlite3.Error, ShardError) as keep_exc:
                outcome, exc = None, keep_exc
        if outcome is None:
            exc = exc or RuntimeError("no result")
            failures[job.key] = f"{type(exc).__name__}: {exc}"[:500]
            if progress:
                bar.update({"error": failures[job.key]})
            return
        results[job.key] = outcome.result
        played = outcome.result["rounds"]
        if progress:
            if not in_process and job.mode != "oracle":  # in-process rounds were shown live
                for row in played:
                    bar.note("  " + round_line(job.mode, job.campaign, rounds, row))
            bar.update({"rounds": len(played), "won": sum(r["won"] for r in played)})

    warm_up(plan)
    # without --env-url, worker processes and Ray tasks embed their own server (one shared from
    # this process would serialise their environment work; a cluster could not reach it)
    own_env = env_url is None and not in_process
    try:
        with contextlib.nullcontext() if own_env else environment(env_url) as url:
            jobs = [
                CampaignJob(tag, task, tactics, c, rounds, model, m, alpha_rule, url,
                            keep_shard=db is not None, env=driver_settings())
                for c in campaigns
                for m in modes
            ]  # fmt: skip
            fn = play_campaign_job
            if in_process and progress:
                fn = functools.partial(play_campaign_job, progress=lambda s: bar.note("  " + s))
            try:
                run_jobs(fn, jobs, start, plan, done)
            except BackendError as exc:
                raise CampaignError(str(exc)) from exc
    finally:
        remove_leftovers(f"campaign-{tag}")
    if failures:
        lines = [f"campaign {c} ({m}): {why}" for (c, m), why in sorted(failures.items())]
        kept = f"; the ones that finished are kept in {db}" if db and results else ""
        raise CampaignFailed(f"{len(failures)} campaign(s) failed{kept}:\n  " + "\n  ".join(lines))
    ordered = [results[(c, m)] for c in campaigns for m in modes]  # sequential order
    return summarise(
        ordered, task=task, tactics=tactics, campaigns=campaigns, rounds=rounds, model=model
    )
