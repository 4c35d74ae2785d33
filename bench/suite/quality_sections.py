"""`make bench` quality sections: random / naive / rules-only / hybrid play per task, and the
main job (the training run) summarised.

Split from run_all.py, which keeps the orchestration and the CLI (and puts the checkout on
sys.path, so `bench.*` imports).
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path
from typing import Any

from bench.experiments import training_run
from bench.speed.agent_bench import clear_process_caches, llama_available
from fakegang.runs.evaluation import evaluate
from fakegang.tools.learning.alpha import MODE_COLUMNS
from fakegang_env.policies import run_policy
from fakegang_env.tasks import TASK_NAMES as TASKS


def quality_row(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r and not r.get("skipped")]
    n = len(ok)
    if not n:
        return {"episodes": 0}
    return {
        "episodes": n,
        "seeds": [r["seed"] for r in ok],
        "win_rate": round(sum(bool(r["won"]) for r in ok) / n, 4),
        "mean_grader": round(sum(r["grader_score"] or 0 for r in ok) / n, 4),
        "mean_steps": round(sum(r["steps_used"] for r in ok) / n, 2),
        "llm_calls_per_episode": round(sum(r.get("llm_calls", 0) for r in ok) / n, 2),
        "modes": {mode: sum(r.get(key, 0) for r in ok) for mode, key in MODE_COLUMNS.items()},
        "errors": sum("error" in r for r in rows),
        "skipped": sum(bool(r.get("skipped")) for r in rows),
    }


def bench_policies(seeds: list[int]) -> dict:
    out: dict[str, dict] = {}
    for policy in ("random", "naive"):
        for task in TASKS:
            rows = [run_policy(policy, task, s) for s in seeds]
            out.setdefault(task, {})[policy] = quality_row(rows)
    return out


def bench_rules_agent(env_url: str, seeds: list[int], concurrency: int, work: Path) -> dict:
    """Rules-only agent quality per task (episodes in `concurrency` worker processes)."""
    db = str(work / "fresh-rules.sqlite")  # read-only evaluation: α stays at its floor
    quality: dict[str, dict] = {}
    kw = dict(model="fake", db=db, env_url=env_url)
    clear_process_caches()
    for task in TASKS:
        res = evaluate(task=task, seeds=seeds, concurrency=concurrency, **kw)
        quality[task] = quality_row(res["results"])
    return {"quality": quality}


def bench_training(args: argparse.Namespace, work: Path) -> dict:
    """The main job: summarise `--training-db`, or play `train.py` on a fresh database."""
    if args.training_db:
        out = training_run.summarise(args.training_db)
        out["_db"] = args.training_db
        return out
    if not llama_available():
        return {"skipped": "llama_cpp not installed"}
    db = work / "training.sqlite"
    played = training_run.play(
        db, episodes=args.training_episodes, seed_offset=1000, log=work / "training.log"
    )
    summary = training_run.summarise(db)
    hard = summary["tasks"].get("hard", {}).get("episodes", 0)
    if hard:
        summary["hard_prior_same_rounds"] = training_run.prior_on_the_same_rounds(1000, hard)
    return {**summary, **played, "_db": str(db)}


def bench_hybrid(env_url: str, args: argparse.Namespace, memory: str | None) -> dict:
    """Evaluate a trained memory with the local model on a few unseen seeds per task."""
    if not llama_available():
        return {"skipped": "llama_cpp not installed"}
    db = args.hybrid_db or memory
    if not db:
        return {"skipped": "no training memory (training skipped or failed; pass --hybrid-db)"}
    if not Path(db).is_file():
        raise FileNotFoundError(f"training memory {db} does not exist")
    out: dict[str, Any] = {"seeds": args.hybrid_seeds}
    out["memory"] = f"given memory {db}" if args.hybrid_db else "the training section's memory"
    # The budget is shared out as the tasks come: what easy leaves unused goes to the later ones.
    end = time.monotonic() + args.hybrid_budget_min * 60
    out["quality"] = {}
    out["budget_min"] = args.hybrid_budget_min
    t0 = time.monotonic()
    for i, task in enumerate(TASKS):
        deadline = time.monotonic() + (end - time.monotonic()) / (len(TASKS) - i)
        res = evaluate(
            task=task, seeds=args.hybrid_seeds, model="local", db=db, env_url=env_url,
            deadline=deadline, progress=True,
        )  # fmt: skip
        out["quality"][task] = quality_row(res["results"])
        out["quality"][task]["alpha"] = _alpha(db, task)
    out["eval_s"] = round(time.monotonic() - t0, 1)
    return out


def _alpha(db: str, task: str) -> float | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("select alpha from alpha where task = ?", [task]).fetchone()
        return row[0] if row else None
    except sqlite3.OperationalError:
        return None
    finally:
        conn.close()
