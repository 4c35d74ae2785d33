"""Evaluation: play seeds with the current memory read-only (nothing learned).

Every episode is a job for fakegang/runs/backends.py: played in this process (concurrency 1),
in N worker processes (`concurrency`), or as Ray tasks (`backend="ray"`, a local instance or the
cluster at `address`). A job plays into its own SQLite shard seeded with a snapshot of the
memory and comes back as bytes; the shard is merged into `db` by thread id, so the episode is
recorded there (episodes, steps, LangGraph checkpoints: `fakegang runs`, `replay`, `report` and
Studio see it) exactly once, even when a killed worker's episode is played again. The memory is
only read and the fake model's answers depend only on the prompt, so the results equal
sequential play whatever the backend. Rows are streamed to `out` (JSONL) as episodes finish,
then rewritten in seed order.

Workers play against `env_url` when given; otherwise each worker process embeds its own server
(started once per process): a server shared from this process would serialise their
environment work on its interpreter lock, and on a Ray cluster it would not be reachable. The
local llama.cpp model loads once per worker process (each holds its own copy): keep concurrency
low with it.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from fakegang.graph import resources
from fakegang.runs.backends import BackendError, Plan, start_ray, warm_up
from fakegang.runs.distributed import play_jobs
from fakegang.runs.progress import Progress
from fakegang.runs.runner import environment
from fakegang.runs.worker import EpisodeJob, driver_settings, episode_row, remove_leftovers
from fakegang.tools.env_client import EnvClient
from fakegang.tools.memory.episode_row import COMPARABLE_KEYS
from fakegang.tools.memory.store import EVAL_RUN_PREFIX, Memory, utc_now

__all__ = ["EvalError", "Progress", "comparable", "episode_row", "evaluate", "summarize"]


class EvalError(ValueError):
    """Bad evaluation settings (the message says which)."""


def summarize(task: str, model: str, rows: list[dict]) -> dict:
    """The `--json` summary over the episodes that finished (errors and skips are counted)."""
    ok = [r for r in rows if "error" not in r and not r.get("skipped")]
    n = len(ok)
    return {
        "task": task,
        "model": model,
        "episodes": n,
        "win_rate": round(sum(r["won"] for r in ok) / n, 4) if n else 0.0,
        "mean_grader": round(sum(r["grader_score"] or 0 for r in ok) / n, 4) if n else 0.0,
        "mean_steps": round(sum(r["steps_used"] for r in ok) / n, 2) if n else 0.0,
        "llm_calls": sum(r["llm_calls"] for r in ok),
        "errors": sum("error" in r for r in rows),
        "skipped": sum(bool(r.get("skipped")) for r in rows),
    }


def _healthy(url: str) -> bool:

    with EnvClient(url, timeout_s=5.0, retries=1) as client:
        return client.health()


def _open_out(out: str | Path | None) -> TextIO | None:
    if out is None:
        return None
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise EvalError(f"cannot write --out {path}: {exc.strerror or exc}") from exc


def _record_run(db: str, run_id: str, status: str, settings: dict, total: int) -> None:
    """The eval run's row, so `fakegang runs` lists it with its episodes."""
    memory = Memory(db)
    try:
        row = {"run_id": run_id, "status": status, "model": settings["model"]}
        if status == "running":
            row.update(started_at=utc_now(), settings=json.dumps(settings), episodes_total=total)
        memory.upsert_run(row)
    finally:
        memory.close()


def evaluate(
    *,
    task: str,
    seeds: list[int],
    model: str,
    db: str,
    env_url: str | None = None,
    concurrency: int = 1,
    backend: str = "local",
    address: str | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    deadline: float | None = None,
    on_row: Callable[[dict], None] | None = None,
    tactics: str = "classic",
) -> dict:
    """Play `seeds` of `task` with the memory in `db` read-only; returns the summary + rows.

    `concurrency` workers (processes, or a local Ray instance's CPUs), `backend` local|ray,
    `address` a Ray cluster. `deadline` (a `time.monotonic()` value) stops starting new episodes
    after it (they are reported as skipped). An episode that raises becomes a row with an
    `error` and does not stop the others; the episodes that finished are recorded in `db`.
    """
    plan = Plan(backend=backend, concurrency=concurrency, address=address)
    try:
        plan.check()
    except BackendError as exc:
        raise EvalError(str(exc)) from exc
    if not seeds:
        raise EvalError("no seeds to play")
    if env_url is not None and not _healthy(env_url):
        raise EvalError(f"no environment server answers at {env_url} (GET /health failed)")
    sink = _open_out(out)
    run_id = EVAL_RUN_PREFIX + uuid.uuid4().hex[:8]
    settings = {
        "kind": "eval", "task": task, "seeds": seeds, "model": model, "backend": plan.describe(),
        "tactics": tactics,
    }  # fmt: skip
    sink_lock = threading.Lock()
    rows: list[dict] = []
    status = "interrupted"
    started_ray = False
    try:
        if backend == "ray":
            try:
                started_ray = start_ray(plan)
            except BackendError as exc:
                raise EvalError(str(exc)) from exc
        warm_up(plan)
        # without --env-url, every worker process embeds its own server: one shared server in
        # this process would serialise the workers' environment work on its interpreter lock
        # (and a cluster's workers cannot reach this machine's loopback anyway)
        own_env = env_url is None and (backend == "ray" or concurrency > 1)
        with contextlib.nullcontext() if own_env else environment(env_url) as url:
            t0 = time.time()
            wall_deadline = None if deadline is None else t0 + (deadline - time.monotonic())
            jobs = [
                EpisodeJob(
                    run_id,
                    i + 1,
                    task,
                    seed,
                    model,
                    url,
                    t0,
                    wall_deadline,
                    driver_settings(),
                    tactics,
                )
                for i, seed in enumerate(seeds)
            ]
            _record_run(db, run_id, "running", settings, len(seeds))
            bar = Progress(len(seeds), f"eval {task}") if progress else None

            def _finish(row: dict) -> None:
                with sink_lock:
                    if sink is not None:
                        sink.write(json.dumps(row) + "\n")
                        sink.flush()
                if bar is not None:
                    bar.update(row)
                if on_row is not None:
                    on_row(row)

            try:
                rows = play_jobs(jobs, db=db, plan=plan, on_row=_finish)
            except BackendError as exc:
                raise EvalError(str(exc)) from exc
            status = "finished"
    finally:
        if started_ray:
            import ray

            ray.shutdown()
        resources.reset_all()
        remove_leftovers(run_id)
        if sink is not None:
            sink.close()
        if Path(db).exists():
            _record_run(db, run_id, status, settings, len(seeds))
    if out is not None:  # streamed in finishing order; keep the file in seed order
        path = Path(out)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        tmp.replace(path)
    summary = summarize(task, model, rows)
    summary["concurrency"] = concurrency
    summary["tactics"] = tactics
    summary["backend"] = plan.describe()
    summary["run_id"] = run_id
    summary["results"] = rows
    return summary


def comparable(rows: list[dict]) -> list[dict]:
    """The scheduling-independent part of result rows (what sequential and concurrent share)."""
    return [{k: r.get(k) for k in (*COMPARABLE_KEYS, "error", "skipped")} for r in rows]
