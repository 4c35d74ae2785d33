"""Helpers for the run-management tests: compare two runs of the same settings table by table.

Run ids (hence thread ids) are random and time columns differ (timestamps, the measured LLM
latency), so rows are keyed by episode number and those columns are dropped before comparing.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from fakegang.graph.context import Context
from fakegang.graph.graph import compile_with_sqlite
from fakegang.runs.runner import TrainOptions
from fakegang.tools.memory.store import Memory

METRIC_VOLATILE = {"timestamp", "run_id", "thread_id"}
EPISODE_VOLATILE = {"thread_id", "run_id", "started_at", "finished_at"}
#: Episodes of the pause/replay/fork/prune scenarios and of their uninterrupted reference.
EPISODES = 2


def metrics(log_dir: Path) -> list[dict]:
    rows = [json.loads(x) for x in (Path(log_dir) / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in METRIC_VOLATILE} for r in rows]


def _rows(conn: sqlite3.Connection, sql: str, args=()) -> list[dict]:
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def memory_tables(db: Path, run_id: str) -> dict:
    """episodes, steps, reflections, trajectories, alpha of one run, keyed by episode number."""
    conn = sqlite3.connect(str(db))
    try:
        episodes = _rows(conn, "select * from episodes where run_id = ? order by episode", [run_id])
        ep_of = {e["thread_id"]: e["episode"] for e in episodes}
        steps = {
            ep_of[t]: [
                {k: v for k, v in s.items() if k not in ("thread_id", "llm_latency_s")}
                for s in _rows(conn, "select * from steps where thread_id = ? order by idx", [t])
            ]
            for t in ep_of
        }
        reflections = [
            {
                **{k: v for k, v in r.items() if k not in ("thread_id", "created_at")},
                "episode": ep_of.get(r["thread_id"]),
            }
            for r in _rows(conn, "select * from reflections order by id")
        ]
        trajectories = [
            {
                **{k: v for k, v in r.items() if k not in ("thread_id", "updated_at")},
                "episode": ep_of.get(r["thread_id"]),
            }
            for r in _rows(conn, "select * from trajectories order by task")
        ]
        alpha = [
            {k: v for k, v in r.items() if k != "updated_at"}
            for r in _rows(conn, "select * from alpha order by task")
        ]
        return {
            "episodes": [
                {k: v for k, v in e.items() if k not in EPISODE_VOLATILE} for e in episodes
            ],
            "steps": steps,
            "reflections": reflections,
            "trajectories": trajectories,
            "alpha": alpha,
        }
    finally:
        conn.close()


def only_run_id(db: Path) -> str:
    conn = sqlite3.connect(str(db))
    try:
        ids = [r[0] for r in conn.execute("select run_id from runs where run_id not like 'fork-%'")]
    finally:
        conn.close()
    assert len(ids) == 1, ids
    return ids[0]


def checkpoint_count(db: Path, thread_id: str) -> int:
    conn = sqlite3.connect(str(db))
    try:
        return conn.execute(
            "select count(*) from checkpoints where thread_id = ?", [thread_id]
        ).fetchone()[0]
    finally:
        conn.close()


def options(tmp: Path, env_url: str, **kw) -> TrainOptions:
    settings = {k: kw.pop(k) for k in list(kw) if k in Context.__dataclass_fields__}
    context = Context(model="fake", db_path=str(tmp / "agent.sqlite"), **settings)
    return TrainOptions(
        context=context,
        env_url=env_url,
        task="easy",
        episodes=EPISODES,
        log_dir=str(tmp / "runs"),
        **kw,
    )


def copy_db(src: Path, dst_dir: Path) -> Path:
    dst = dst_dir / src.name
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            shutil.copy(f"{src}{suffix}", f"{dst}{suffix}")
    return dst


def state(db: Path | str, thread_id: str):
    app = compile_with_sqlite(db)
    try:
        return app.get_state({"configurable": {"thread_id": thread_id}})
    finally:
        app.checkpointer.conn.close()


def steps_of(db: Path | str, thread_id: str) -> list[dict]:
    memory = Memory(db)
    try:
        return memory.steps(thread_id)
    finally:
        memory.close()


def assert_same_as_reference(opts: TrainOptions, run_id: str, reference) -> None:
    ref_db, ref_logs, ref_run = reference
    assert metrics(Path(opts.log_dir)) == metrics(ref_logs)
    assert memory_tables(Path(opts.db), run_id) == memory_tables(ref_db, ref_run)
