"""Helpers for the scale-out tests: a small trained memory and what an eval run recorded."""

from __future__ import annotations

import io
import shutil
import sqlite3
from pathlib import Path

VOLATILE = {"thread_id", "run_id", "started_at", "finished_at", "llm_latency_s"}


def trained_memory(root: Path, env_url: str) -> str:
    """3 easy training episodes with the stand-in model, plus credit the LLM has earned: α is
    above its floor, so the LLM path runs in evaluation and its prompts carry lessons and a
    few-shot example."""
    from fakegang.graph.context import Context
    from fakegang.runs.runner import TrainOptions, train
    from fakegang.tools.learning import credit_store
    from fakegang.tools.learning.credit import Credit
    from fakegang.tools.memory.store import Memory

    db = str(root / "mem.sqlite")
    opts = TrainOptions(
        context=Context(model="fake", db_path=db),
        env_url=env_url,
        task="easy",
        episodes=3,
        log_dir=str(root),
    )
    train(opts, out=io.StringIO())
    memory = Memory(db)
    try:
        credit_store.record(
            memory, "easy", "trusted", Credit(60, 0, 0), llm_calls=60, actions=60, alpha=0.5
        )
    finally:
        memory.close()
    return db


def copy_db(src: str, dst: Path) -> str:
    """A copy of a memory (each eval then records into its own database)."""
    conn = sqlite3.connect(src)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    shutil.copyfile(src, dst)
    return str(dst)


def sequential_eval(memory_db: str, env_url: str, dst: Path, seeds: list[int]) -> tuple[str, dict]:
    """The reference every backend is compared with: `seeds` of easy played one after the other
    on a copy of `memory_db`, with the LLM path exercised (its credit lets it be asked)."""
    from fakegang.runs.evaluation import evaluate

    db = copy_db(memory_db, dst)
    res = evaluate(task="easy", seeds=seeds, model="fake", db=db, env_url=env_url)
    assert res["errors"] == 0 and res["llm_calls"] > 0  # the LLM path ran, not only the rules
    return db, res


def rows(conn: sqlite3.Connection, sql: str, args=()) -> list[dict]:
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def thread_record(conn: sqlite3.Connection, episode: dict) -> dict:
    """One recorded episode without volatile columns: its row, steps, checkpoint/write counts."""
    t = episode["thread_id"]
    steps = rows(conn, "select * from steps where thread_id = ? order by idx", [t])
    count = "select count(*) from {} where thread_id = ?"
    return {
        "episode": {k: v for k, v in episode.items() if k not in VOLATILE},
        "steps": [{k: v for k, v in s.items() if k not in VOLATILE} for s in steps],
        "checkpoints": conn.execute(count.format("checkpoints"), [t]).fetchone()[0],
        "writes": conn.execute(count.format("writes"), [t]).fetchone()[0],
    }


def recorded(db: str, run_id: str) -> dict:
    """Per episode number: its episodes row, its steps and its checkpoint/write counts."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for ep in rows(conn, "select * from episodes where run_id = ?", [run_id]):
            out[ep["episode"]] = thread_record(conn, ep)
        return out
    finally:
        conn.close()


def duplicates(db: str) -> int:
    """Rows sharing a thread id in `episodes` (the primary key makes it 0 unless broken) plus
    episodes recorded under more than one thread for the same run and episode number."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "select count(*) from (select run_id, episode, count(*) n from episodes "
            "group by run_id, episode having n > 1)"
        ).fetchone()[0]
    finally:
        conn.close()
