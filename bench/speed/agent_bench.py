"""The agent's own costs for `bench/suite/run_all.py`: graph overhead per action and checkpoint
bytes (`bench_graph`), and the local model's decision latency (`bench_llm`).

Split from run_all.py, which keeps the orchestration and the CLI (quality_sections.py and
learning_sections.py hold the other sections).
"""

from __future__ import annotations

import sqlite3
import statistics
from pathlib import Path
from typing import Any

from bench.speed.timing import lap, median, timed
from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.graph import compile_with_sqlite
from fakegang.runs.checkpoint_tables import thread_bytes
from fakegang.runs.runner import run_episode


def clear_process_caches() -> None:
    """Drop the rule engine's pairwise-evidence cache so timed runs start equally cold."""
    from fakegang.tools.rules import evidence

    evidence._PAIR_VOTES.clear()


def llama_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def _timed_env_calls(ctx: Context) -> list[float]:
    """Wrap the shared environment client so every HTTP call's wall time is recorded."""
    client = resources.env_client(ctx)
    spent: list[float] = []
    inner = client._request

    def timed(*args: Any, **kwargs: Any) -> dict:
        with lap(spent):
            return inner(*args, **kwargs)

    client._request = timed  # type: ignore[method-assign]
    return spent


def _checkpoint_bytes(db: Path, thread_id: str) -> int:
    conn = sqlite3.connect(str(db))
    try:
        return thread_bytes(conn, thread_id)
    finally:
        conn.close()


def _db_bytes(db: Path) -> int:
    """Size of the database file after folding its WAL into it."""
    conn = sqlite3.connect(str(db))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return db.stat().st_size


def bench_graph(env_url: str, seeds: list[int], work: Path) -> dict:
    """Overhead per action and checkpoint bytes of hard episodes, each on a fresh memory."""
    per_action, per_step, ckpt, growth, env_share, n_actions = [], [], [], [], [], []
    for seed in seeds:
        db = work / f"overhead-{seed}.sqlite"
        ctx = Context(env_url=env_url, db_path=str(db), model="fake", learn=True)
        app = compile_with_sqlite(db)
        resources.memory(ctx)  # create the tables before measuring the growth
        before = _db_bytes(db)
        spent = _timed_env_calls(ctx)
        clear_process_caches()
        thread_id, wall = timed(
            run_episode, app, ctx, run_id="bench", episode=seed, task="hard", seed=seed
        )
        mem = resources.memory(ctx)
        steps = mem.steps(thread_id)
        row = mem.episode(thread_id)
        llm_s = sum(s["llm_latency_s"] or 0.0 for s in steps)
        overhead = wall - sum(spent) - llm_s
        per_action.append(overhead / len(steps) * 1000)
        per_step.append(overhead / max(1, row["steps_used"]) * 1000)
        env_share.append(sum(spent) / wall)
        app.checkpointer.conn.commit()
        ckpt.append(_checkpoint_bytes(db, thread_id))
        resources.reset_all()
        app.checkpointer.conn.close()
        growth.append(_db_bytes(db) - before)
        n_actions.append(len(steps))
    return {
        "episodes": len(seeds),
        "actions_per_episode": round(statistics.mean(n_actions), 1),
        "overhead_ms_per_action": round(median(per_action), 2),
        "overhead_ms_per_budget_step": round(median(per_step), 2),
        "env_share_of_wall": round(median(env_share), 3),
        "checkpoint_bytes_per_episode": int(median(ckpt)),
        "db_growth_bytes_per_episode": int(median(growth)),
        "_dbs": [str(work / f"overhead-{s}.sqlite") for s in seeds],
    }


def bench_llm(calls: int, cold_calls: int) -> dict:
    if not llama_available():
        return {"skipped": "llama_cpp not installed"}
    from bench.speed import llm_latency
    from fakegang.tools.models.chat_models import ModelSettings, make_chat_model
    from fakegang.tools.models.llm import decide

    settings = ModelSettings(spec="local", timeout_s=300.0, max_retries=0)
    model, load_s = timed(make_chat_model, settings)
    llama = llm_latency._llama_of(model)
    prompts, _, source = llm_latency.episode_prompts(max(calls, cold_calls) + 1)

    def one(p):
        system, user, choices = p
        return decide(model, system=system, user=user, choices=choices, settings=settings)

    cold = []
    for p in prompts[1 : cold_calls + 1]:
        llama.reset()
        cold.append(one(p))
    llama.reset()
    one(prompts[0])  # an episode's first call pays for the stable prefix once
    warm, reused = [], []
    for p in prompts[1 : calls + 1]:
        result, n = llm_latency._reused(llama, lambda p=p: one(p))
        warm.append(result)
        reused.append(n)
    out = {
        "model": "local SmolLM2-135M-Instruct (llama.cpp)",
        "prompts": source,
        "load_s": round(load_s, 2),
        "decisions_prefix_reused": len(warm),
        "median_s_prefix_reused": round(median(r.latency_s for r in warm), 2),
        "prompt_tokens_median": int(median(r.tokens_in for r in warm)),
        "reused_tokens_median": int(median(reused)),
        "new_tokens_median": llm_latency._new_tokens(warm, reused),
        "ok": sum(r.ok for r in warm + cold),
        "calls": len(warm) + len(cold),
    }
    if cold:
        out["decisions_cold"] = len(cold)
        out["median_s_cold"] = round(median(r.latency_s for r in cold), 2)
    resources.reset_all()
    return out
