"""The driver side of spreading episodes over workers: snapshot, dispatch, merge, report.

`play_jobs` snapshots the memory once, runs the jobs on the chosen backend
(fakegang/runs/backends.py), and merges each returned shard into the main database as soon as
it arrives (so an interrupted sweep keeps every episode that finished). A job whose worker is
lost for good (retries exhausted) becomes a row with an `error`; it is never half-recorded,
because only finished episodes of a shard are merged.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from fakegang.runs.backends import Plan, run_jobs
from fakegang.runs.shards import memory_snapshot, merge_shard_bytes
from fakegang.runs.worker import EpisodeJob, EpisodeOutcome, play_episode


def error_row(job: EpisodeJob, exc: BaseException) -> dict:
    """The row of an episode whose worker failed for good."""
    from fakegang.runs.runner import episode_thread_id

    return {
        "index": job.index,
        "task": job.task,
        "model": job.model,
        "seed": job.seed,
        "thread_id": episode_thread_id(job.run_id, job.index),
        "error": f"worker lost: {type(exc).__name__}: {exc}"[:500],
    }


def play_jobs(
    jobs: Sequence[EpisodeJob],
    *,
    db: str | Path,
    plan: Plan,
    on_row: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Play every job on `plan`'s backend, merge the shards into `db`; rows in job order."""
    snapshot = memory_snapshot(db)
    rows: dict[int, dict] = {}
    workdir = Path(tempfile.mkdtemp(prefix="fakegang-merge-"))

    def done(job: EpisodeJob, outcome: EpisodeOutcome | None, exc: BaseException | None) -> None:
        if outcome is None:
            row = error_row(job, exc or RuntimeError("no result"))
        else:
            row = dict(outcome.row)
            row["worker"] = outcome.worker
            if outcome.shard is not None:
                merge_shard_bytes(db, outcome.shard, workdir, name=row["thread_id"])
        rows[job.index] = row
        if on_row is not None:
            on_row(row)

    try:
        run_jobs(play_episode, jobs, snapshot, plan, done)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return [rows[j.index] for j in jobs if j.index in rows]
