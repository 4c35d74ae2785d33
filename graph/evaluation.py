"""Evaluation: play seeds with the current memory read-only (nothing learned, nothing written)."""

from __future__ import annotations

import uuid

from langgraph.checkpoint.memory import InMemorySaver

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.graph import builder
from fakegang.graph.runner import environment, run_episode


def evaluate(
    *, task: str, seeds: list[int], model: str, db: str, env_url: str | None = None
) -> dict:
    """Play seeds with the current memory read-only: nothing learned, nothing written."""
    with environment(env_url) as url:
        ctx = Context(env_url=url, db_path=db, model=model, learn=False)
        app = builder.compile(checkpointer=InMemorySaver(), name="fakegang_episode")
        results = []
        run_id = "eval-" + uuid.uuid4().hex[:8]
        for i, seed in enumerate(seeds, 1):
            thread_id = run_episode(app, ctx, run_id=run_id, episode=i, task=task, seed=seed)
            state = app.get_state({"configurable": {"thread_id": thread_id}}).values
            results.append({**state["result"], "seed": seed, "tally": state["tally"]})
    resources.reset_all()
    n = len(results)
    return {
        "task": task,
        "model": model,
        "episodes": n,
        "win_rate": round(sum(r["won"] for r in results) / n, 4) if n else 0.0,
        "mean_grader": round(sum(r["grader_score"] or 0 for r in results) / n, 4) if n else 0.0,
        "mean_steps": round(sum(r["steps_used"] for r in results) / n, 2) if n else 0.0,
        "llm_calls": sum(r["tally"]["llm_calls"] for r in results),
        "results": results,
    }
