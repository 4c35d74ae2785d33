"""Evaluation: play seeds with the current memory read-only (nothing learned, nothing written).

Episodes may run N at a time (`concurrency`) on threads of this process against one
environment server: each episode is its own HTTP session (episode id = thread id) and its own
in-memory checkpointer, the memory is only read, and the fake model's answers depend only on
the prompt, so the results equal sequential play. Rows are streamed to `out` (JSONL) as
episodes finish, then rewritten in seed order.

Threads overlap waiting (environment HTTP calls, a remote LLM); the graph's own work (rule
engine, checkpoints) holds the GIL, so with `--model fake` on 2 cores concurrency gains little
(bench/run_all.py measures it). The local llama.cpp model runs one call at a time per process
and a call's deadline includes waiting for that lock, so with `--model local` concurrency
mostly adds timeouts and breaks the KV-cache prefix reuse: keep it at 1 there.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from langgraph.checkpoint.memory import InMemorySaver

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.graph import builder
from fakegang.graph.nodes import tally_columns
from fakegang.runs.runner import environment, run_episode

#: Per-episode fields that must not depend on how the episodes were scheduled.
RESULT_KEYS = (
    "task",
    "seed",
    "won",
    "reward",
    "grader_score",
    "steps_used",
    "recall",
    "precision",
    "final_message",
    "alpha_used",
    "mode_agree",
    "mode_rule",
    "mode_llm",
    "llm_calls",
    "llm_tokens",
    "llm_errors",
)


class EvalError(ValueError):
    """Bad evaluation settings (the message says which)."""


class Progress:
    """A minimal progress bar on stderr (a line per ~10 % when stderr is not a terminal)."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total, self.label = total, label
        self.stream = stream or sys.stderr
        self.done = self.wins = self.errors = 0
        self.started = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._last_decile = -1

    def update(self, row: dict) -> None:
        with self._lock:
            self.done += 1
            self.wins += bool(row.get("won"))
            self.errors += "error" in row
            decile = self.done * 10 // max(1, self.total)
            if not self.tty and decile == self._last_decile and self.done < self.total:
                return
            self._last_decile = decile
            filled = self.done * 20 // max(1, self.total)
            elapsed = time.monotonic() - self.started
            line = (
                f"{self.label} [{'#' * filled}{'.' * (20 - filled)}] {self.done}/{self.total} "
                f"wins {self.wins}{f' errors {self.errors}' if self.errors else ''} "
                f"{elapsed:.0f}s"
            )
            end = "" if self.tty and self.done < self.total else "\n"
            print(("\r" if self.tty else "") + line, end=end, file=self.stream, flush=True)


def episode_row(state: dict, *, task: str, model: str, seed: int, index: int) -> dict:
    """One JSONL row of an evaluated episode, from its final graph state."""
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
    from fakegang.tools.env_client import EnvClient

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


def evaluate(
    *,
    task: str,
    seeds: list[int],
    model: str,
    db: str,
    env_url: str | None = None,
    concurrency: int = 1,
    out: str | Path | None = None,
    progress: bool = False,
    deadline: float | None = None,
    on_row: Callable[[dict], None] | None = None,
    tactics: str = "classic",
) -> dict:
    """Play `seeds` of `task` with the memory in `db` read-only; returns the summary + rows.

    `concurrency` episodes run at once; `deadline` (a `time.monotonic()` value) stops starting
    new episodes after it (they are reported as skipped). An episode that raises becomes a row
    with an `error` and does not stop the others.
    """
    if concurrency < 1:
        raise EvalError(f"--concurrency must be at least 1, got {concurrency}")
    if not seeds:
        raise EvalError("no seeds to play")
    if env_url is not None and not _healthy(env_url):
        raise EvalError(f"no environment server answers at {env_url} (GET /health failed)")
    sink = _open_out(out)
    run_id = "eval-" + uuid.uuid4().hex[:8]
    sink_lock = threading.Lock()
    rows: list[dict | None] = [None] * len(seeds)
    try:
        with environment(env_url) as url:
            ctx = Context(env_url=url, db_path=db, model=model, learn=False)
            bar = Progress(len(seeds), f"eval {task}") if progress else None
            t0 = time.monotonic()

            def _finish(i: int, row: dict) -> dict:
                rows[i] = row
                with sink_lock:
                    if sink is not None:
                        sink.write(json.dumps(row) + "\n")
                        sink.flush()
                if bar is not None:
                    bar.update(row)
                if on_row is not None:
                    on_row(row)
                return row

            def play(i: int) -> dict:
                seed = seeds[i]
                if deadline is not None and time.monotonic() > deadline:
                    row: dict[str, Any] = {"index": i + 1, "task": task, "seed": seed}
                    row["skipped"] = True
                    return _finish(i, row)
                started = time.monotonic()
                app = builder.compile(checkpointer=InMemorySaver(), name="fakegang_episode")
                try:
                    thread_id = run_episode(
                        app,
                        ctx,
                        run_id=run_id,
                        episode=i + 1,
                        task=task,
                        seed=seed,
                        tactics=tactics,
                    )
                    state = app.get_state({"configurable": {"thread_id": thread_id}}).values
                    row = episode_row(state, task=task, model=model, seed=seed, index=i + 1)
                except Exception as exc:  # one broken episode must not lose the others
                    row = {"index": i + 1, "task": task, "model": model, "seed": seed}
                    row["error"] = f"{type(exc).__name__}: {exc}"[:500]
                row["started_s"] = round(started - t0, 3)  # shows how episodes overlapped
                row["wall_s"] = round(time.monotonic() - started, 3)
                return _finish(i, row)

            if concurrency == 1:
                for i in range(len(seeds)):
                    play(i)
            else:
                with ThreadPoolExecutor(concurrency, thread_name_prefix="eval") as pool:
                    try:
                        list(pool.map(play, range(len(seeds))))
                    except KeyboardInterrupt:
                        pool.shutdown(wait=False, cancel_futures=True)
                        raise
    finally:
        resources.reset_all()
        if sink is not None:
            sink.close()
    done = [r for r in rows if r is not None]
    if out is not None:  # streamed in finishing order; keep the file in seed order
        path = Path(out)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in done), encoding="utf-8")
        tmp.replace(path)
    summary = summarize(task, model, done)
    summary["concurrency"] = concurrency
    summary["tactics"] = tactics
    summary["results"] = done
    return summary


def comparable(rows: list[dict]) -> list[dict]:
    """The scheduling-independent part of result rows (what sequential and concurrent share)."""
    return [{k: r.get(k) for k in (*RESULT_KEYS, "error", "skipped")} for r in rows]
