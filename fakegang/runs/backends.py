"""Where units of work run: this process, a pool of worker processes, or Ray tasks.

The API is generic so `eval` (one job per episode) and `campaign` (one job per campaign) share
it: `run_jobs(fn, jobs, shared, plan, on_done)` calls the module-level function
`fn(job, shared)` for every picklable `job` and hands each result to `on_done(job, result,
error)` in the driver as it arrives (in finishing order). `shared` is sent once per worker
where the backend allows it (Ray puts it in the object store once); results carry their own
SQLite shard (fakegang/runs/shards.py) for the driver to merge.

* `local`, concurrency 1: the jobs run one after the other in this process.
* `local`, concurrency N: a `ProcessPoolExecutor` of N worker processes (forkserver start, so a
  worker never inherits the driver's threads or sockets). Threads would not help: scoring and
  the graph's bookkeeping hold the interpreter lock. A killed worker breaks the whole pool
  (`BrokenProcessPool`) and the standard library does not retry, so the jobs that had not
  finished are resubmitted to a fresh pool, up to `max_retries` times each.
* `ray`: one Ray task per job with Ray's own retries (`max_retries`) for a worker process or
  node that dies; a local instance (`num_cpus` = concurrency) unless `address` names a cluster
  (`auto`, or the head's `host:port`).

`campaign` plugs in with one job per campaign (per campaign x mode with `--compare`; rounds
stay sequential inside it): a picklable `CampaignJob` and the module-level
`play_campaign_job(job, start)` (fakegang/runs/campaign_worker.py), where `start` is the starting
memory (a `--from-db` copy, or None for a fresh one); the driver (campaign_sweep.py) keeps each
returned shard as the campaign's own database and merges its rounds into `--db`
(`shards.merge_shard`, keyed by the campaign's thread ids and run id).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

BACKENDS = ("local", "ray")
RAY_EXTRA_HINT = 'the Ray backend needs the "ray" extra: pip install "fakegang[ray]"'
#: Ray's setting of its worker processes' niceness (RayConfig `worker_niceness`, default 15).
RAY_NICENESS_VAR = "RAY_worker_niceness"
#: Modules the forkserver imports once, so forked workers start without re-importing them.
PRELOAD = (
    "fakegang.runs.worker",
    "fakegang.runs.campaign_worker",
    "fakegang.graph.graph",
    "fakegang_env.server.app",
)

OnDone = Callable[[Any, Any, BaseException | None], None]


class BackendError(ValueError):
    """Bad backend settings, or a backend that is not installed (the message says which)."""


@dataclass(frozen=True)
class Plan:
    """How to run the jobs: `backend` local|ray, `concurrency` workers, Ray `address`."""

    backend: str = "local"
    concurrency: int = 1
    address: str | None = None
    max_retries: int = 3

    def check(self) -> None:
        if self.backend not in BACKENDS:
            raise BackendError(f"unknown backend {self.backend!r}; choose one of {BACKENDS}")
        if self.concurrency < 1:
            raise BackendError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.address is not None and self.backend != "ray":
            raise BackendError("--address joins a Ray cluster: use it with --backend ray")
        if self.max_retries < 0:
            raise BackendError(f"max_retries must be >= 0, got {self.max_retries}")

    def describe(self) -> str:
        if self.backend == "ray":
            return f"ray ({self.address or f'local, {self.concurrency} CPUs'})"
        if self.concurrency == 1:
            return "local (sequential)"
        return f"local ({self.concurrency} worker processes)"


def import_ray() -> Any:
    """The `ray` module, or a BackendError naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise BackendError(RAY_EXTRA_HINT) from exc
    return ray


def run_jobs(
    fn: Callable[[Any, Any], Any],
    jobs: Sequence[Any],
    shared: Any,
    plan: Plan,
    on_done: OnDone,
) -> None:
    """Run `fn(job, shared)` for every job as `plan` says; `on_done` sees each result."""
    plan.check()
    if plan.backend == "ray":
        _run_ray(fn, jobs, shared, plan, on_done)
    elif plan.concurrency == 1:
        for job in jobs:
            try:
                result = fn(job, shared)
            except Exception as exc:  # reported per job, like the other backends do
                on_done(job, None, exc)
            else:
                on_done(job, result, None)
    else:
        _run_processes(fn, jobs, shared, plan, on_done)


# ------------------------------------------------------------------------------ processes
def _pool(workers: int) -> ProcessPoolExecutor:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(PRELOAD))
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def warm_up(plan: Plan) -> None:
    """Start the forkserver now, so its imports of the agent overlap the driver's own start-up
    (`fakegang eval` calls it before importing the agent itself). Ray is started by the caller
    (`start_ray`); its `ray.init` blocks, so it cannot overlap the driver's imports the same way."""
    if plan.backend == "local" and plan.concurrency > 1:
        from multiprocessing import forkserver

        multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
        forkserver.ensure_running()


def _run_processes(fn, jobs, shared, plan: Plan, on_done: OnDone) -> None:
    pending = list(range(len(jobs)))
    attempts = [0] * len(jobs)
    while pending:
        pool = _pool(min(plan.concurrency, len(pending)))
        broken = False
        try:
            futures: dict[Future, int] = {pool.submit(fn, jobs[i], shared): i for i in pending}
            pending = []
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = futures[fut]
                    exc = fut.exception()
                    if isinstance(exc, BrokenProcessPool):
                        broken = True
                        attempts[i] += 1
                        if attempts[i] > plan.max_retries:
                            on_done(jobs[i], None, exc)
                        else:
                            pending.append(i)  # a worker died: play it again in a new pool
                    elif exc is not None:
                        on_done(jobs[i], None, exc)
                    else:
                        on_done(jobs[i], fut.result(), None)
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=not broken, cancel_futures=True)
        pending.sort()


# ------------------------------------------------------------------------------ ray
def start_ray(plan: Plan) -> bool:
    """Connect to (or start) Ray as `plan` says; True when this call started/joined it."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # No `runtime_env`: every job carries the driver's FAKEGANG_* settings itself
    # (worker.driver_settings), and a runtime env (env_vars, a worker setup hook) routes every
    # worker start through Ray's runtime-env agent: ~1.4 s more before the first task here.
    kwargs: dict[str, Any] = {
        "log_to_driver": False,  # worker output would tear the progress line apart
        "logging_level": "ERROR",
    }
    if plan.address:
        ray.init(address=plan.address, **kwargs)
    else:
        # Ray runs its workers at niceness 15 by default, below its own services and the driver:
        # on a small machine every shard merge or service wake-up then stalls the episodes
        # (measured: an episode took ~30 % longer in a Ray worker than in a pool worker). In the
        # local instance the workers are the job. A cluster keeps what `ray start` set.
        user_set = RAY_NICENESS_VAR in os.environ
        os.environ.setdefault(RAY_NICENESS_VAR, "0")  # read by the raylet when it starts
        try:
            ray.init(num_cpus=plan.concurrency, include_dashboard=False, **kwargs)
        finally:
            if not user_set:
                del os.environ[RAY_NICENESS_VAR]
    return True


def _run_ray(fn, jobs, shared, plan: Plan, on_done: OnDone) -> None:
    ray = import_ray()
    started = start_ray(plan)
    try:
        remote = ray.remote(max_retries=plan.max_retries, retry_exceptions=False)(fn)
        shared_ref = ray.put(shared)
        refs = {remote.remote(job, shared_ref): i for i, job in enumerate(jobs)}
        waiting = list(refs)
        try:
            while waiting:
                done, waiting = ray.wait(waiting, num_returns=1)
                for ref in done:
                    i = refs[ref]
                    try:
                        result = ray.get(ref)
                    except Exception as exc:  # retries exhausted, or fn raised
                        on_done(jobs[i], None, exc)
                    else:
                        on_done(jobs[i], result, None)
        except KeyboardInterrupt:
            for ref in waiting:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
