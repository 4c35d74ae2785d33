"""One evaluation episode as a unit of work that can run anywhere: this process, a worker
process, or a Ray task on another machine.

`play_episode(job, snapshot)` needs nothing from the driver's filesystem: the memory arrives as
`snapshot` (shard bytes, fakegang/runs/shards.py), the environment is the shared `--env-url` or
a server embedded in the worker process (started once per process, reused by its later jobs),
and the recorded episode goes back as shard bytes inside the returned `EpisodeOutcome`. The
thread id is a function of (run id, episode number), so a retried job records the same thread
and the driver's merge replaces rather than duplicates it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakegang.graph.context import ENV_PREFIX

#: Test hook: `PATH:NODE[:SKIP]` SIGKILLs the worker process at the start of NODE (after SKIP
#: earlier starts of it in that process), once across all processes (the first to create PATH).
KILL_ENV_VAR = "FAKEGANG_TEST_KILL_WORKER"

#: A job's temporary shard directory is named `<prefix><run id>-…`: a SIGKILLed worker cannot
#: remove its own, so the driver removes a run's leftovers on this machine (`remove_leftovers`).
SHARD_DIR_PREFIX = "fakegang-shard-"

_env_stack: ExitStack | None = None
_env_url: str | None = None


@dataclass(frozen=True)
class EpisodeJob:
    """What a worker needs to play one evaluation episode (picklable, no open handles)."""

    run_id: str
    index: int  # 1-based episode number in the run: the thread id derives from it
    task: str
    seed: int
    model: str
    env_url: str | None = None  # None: a server embedded in the worker process
    t0: float = 0.0  # wall-clock start of the run, for started_s (comparable across hosts)
    deadline: float | None = None  # wall-clock time after which the episode is skipped
    env: tuple[tuple[str, str], ...] = ()  # the driver's FAKEGANG_* settings
    tactics: str = "classic"  # the ring's playbook (fakegang_env.tactics)


@dataclass
class EpisodeOutcome:
    index: int
    row: dict[str, Any]
    shard: bytes | None = None  # None for a skipped or failed episode
    worker: dict[str, Any] = field(default_factory=dict)


def driver_settings() -> tuple[tuple[str, str], ...]:
    """The FAKEGANG_* variables of this process: Context reads its settings from them, and a
    worker on another machine (or a forkserver started earlier) would not otherwise see them."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX)))


def apply_settings(env: tuple[tuple[str, str], ...]) -> None:
    """Make this worker process's FAKEGANG_* variables the driver's (see `driver_settings`)."""
    for key in [k for k in os.environ if k.startswith(ENV_PREFIX)]:
        os.environ.pop(key)
    os.environ.update(dict(env))


def embedded_url() -> str:
    """This worker process's own environment server (started on first use, kept for later jobs;
    its daemon thread ends with the process)."""
    global _env_stack, _env_url
    if _env_url is None:
        from fakegang.graph.embedded_env import embedded_env_server

        _env_stack = ExitStack()
        _env_url = _env_stack.enter_context(embedded_env_server())
    return _env_url


def remove_leftovers(run_id: str) -> int:
    """Remove the shard directories of `run_id` that killed workers left in this machine's
    temporary directory (other nodes of a cluster keep theirs until their own clean-up)."""
    found = list(Path(tempfile.gettempdir()).glob(f"{SHARD_DIR_PREFIX}{run_id}-*"))
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
    return len(found)


def worker_identity() -> dict[str, Any]:
    """Host, pid, niceness and (under Ray) node id of the process playing a job."""
    out: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(), "nice": os.nice(0)}
    try:
        import ray

        if ray.is_initialized():
            out["node"] = ray.get_runtime_context().get_node_id()
    except ImportError:
        pass
    return out


def episode_row(state: dict, *, task: str, model: str, seed: int, index: int) -> dict:
    """One result row of an evaluated episode, from its final graph state."""
    from fakegang.graph.state import tally_columns

    result, tally = state["result"], state["tally"]
    return {
        "index": index,
        "task": task,
        "model": model,
        "seed": seed,
        "won": bool(result["won"]),
        "reward": result["reward"],
        "grader_score": result["grader_score"],
        "steps_used": result["steps_used"],
        "recall": result["recall"],
        "precision": result["precision"],
        "final_message": result["final_message"],
        "alpha_used": state["alpha"],
        **tally_columns(tally),
    }


def kill_hook() -> Any | None:
    """The `KILL_ENV_VAR` test hook as a LangGraph callback, or None when the variable is unset."""
    spec = os.environ.get(KILL_ENV_VAR)
    if not spec:
        return None
    from langchain_core.callbacks import BaseCallbackHandler

    marker, node, *rest = spec.split(":")
    skip = int(rest[0]) if rest else 0

    class KillOnce(BaseCallbackHandler):
        seen = 0

        def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
            if kw.get("name") != node or (kw.get("metadata") or {}).get("langgraph_node") != node:
                return
            self.seen += 1
            if self.seen <= skip:
                return
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return  # another process took the one kill
            os.kill(os.getpid(), signal.SIGKILL)

    return KillOnce()


def play_episode(job: EpisodeJob, snapshot: bytes) -> EpisodeOutcome:
    """Play `job` into a fresh shard seeded with `snapshot`; return its row and the shard."""
    from fakegang.graph import resources
    from fakegang.graph.context import Context
    from fakegang.graph.graph import compile_with_sqlite
    from fakegang.runs.runner import episode_thread_id, run_episode
    from fakegang.runs.shards import shard_bytes, write_shard
    from fakegang.tools.rules.actions import log_form

    apply_settings(job.env)
    who = worker_identity()
    base = {"index": job.index, "task": job.task, "model": job.model, "seed": job.seed}
    if job.deadline is not None and time.time() > job.deadline:
        return EpisodeOutcome(job.index, {**base, "skipped": True}, None, who)
    started = time.time()
    tmp = Path(tempfile.mkdtemp(prefix=f"{SHARD_DIR_PREFIX}{job.run_id}-"))
    shard = write_shard(snapshot, tmp / "shard.sqlite")
    data: bytes | None = None
    try:
        url = job.env_url or embedded_url()
        ctx = Context(env_url=url, db_path=str(shard), model=job.model, run_kind="eval")
        ctx.learn = False  # an evaluation never learns, whatever $FAKEGANG_LEARN says
        app = compile_with_sqlite(shard)
        hook = kill_hook()
        if hook is not None:
            app = app.with_config(callbacks=[hook])
        try:
            thread_id = run_episode(
                app,
                ctx,
                run_id=job.run_id,
                episode=job.index,
                task=job.task,
                seed=job.seed,
                tactics=job.tactics,
            )
            state = app.get_state({"configurable": {"thread_id": thread_id}}).values
            row = episode_row(state, task=job.task, model=job.model, seed=job.seed, index=job.index)
            row["action_log"] = [
                log_form(s["action"]) for s in resources.memory(ctx).steps(thread_id)
            ]
            row["thread_id"] = thread_id
        except Exception as exc:  # one broken episode must not lose the others
            row = {**base, "thread_id": episode_thread_id(job.run_id, job.index)}
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
        finally:
            app.checkpointer.conn.close()
            resources.close_memory(str(shard))
        if "error" not in row:
            data = shard_bytes(shard)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    row["started_s"] = round(started - job.t0, 3) if job.t0 else 0.0
    row["wall_s"] = round(time.time() - started, 3)
    return EpisodeOutcome(job.index, row, data, who)
