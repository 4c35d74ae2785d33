"""Per-episode credit rows (tools/learning/credit.py) in the memory database, bounded per task.

One row per episode keyed by its thread id (a re-run of `reflect` rewrites it); the task's credit
is the sum over its last CREDIT_WINDOW episodes, so a model that changes (or a campaign whose
operator changes) is judged on recent evidence, and the table stays bounded.
"""

from __future__ import annotations

from fakegang.tools.learning.credit import Credit
from fakegang.tools.memory.store import Memory, utc_now

CREDIT_WINDOW = 50


def record(
    memory: Memory,
    task: str,
    thread_id: str,
    credit: Credit,
    *,
    llm_calls: int,
    actions: int,
    alpha: float,
) -> None:
    if memory.read_only:
        return
    with memory.write_transaction():
        existing = list(
            memory.db.query("select created_at from credit where thread_id = ?", [thread_id])
        )
        memory.db["credit"].upsert(
            {
                "thread_id": thread_id,
                "task": task,
                "better": credit.better,
                "worse": credit.worse,
                "ties": credit.ties,
                "llm_calls": llm_calls,
                "actions": actions,
                "alpha": alpha,
                "created_at": existing[0]["created_at"] if existing else utc_now(),
            },
            pk="thread_id",
        )
        memory.trim(
            "credit",
            key="thread_id",
            where="task = ?",
            args=[task],
            order="created_at desc, rowid desc",
            keep=CREDIT_WINDOW,
        )


def task_credit(memory: Memory, task: str | None) -> Credit:
    """The task's credit summed over its stored (recent) episodes; None: over every task."""
    where, args = ("where task = ?", [task]) if task is not None else ("", [])
    row = memory.db.execute(
        "select coalesce(sum(better),0), coalesce(sum(worse),0), coalesce(sum(ties),0), "
        f"coalesce(sum(llm_calls),0) from credit {where}",
        args,
    ).fetchone()
    return Credit(int(row[0]), int(row[1]), int(row[2]), int(row[3]))


def history(memory: Memory, task: str | None = None) -> list[dict]:
    where, args = ("where task = ?", [task]) if task else ("", [])
    return list(memory.db.query(f"select * from credit {where} order by created_at, rowid", args))
