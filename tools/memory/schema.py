"""The agent's memory tables (sqlite-utils schemas), created where they do not exist yet.

The `episodes` columns come from tools/memory/episode_row.py (one definition of an episode row); the
learning tables (credit, experience, weight versions, insights) are defined in
tools/memory/learning_schema.py. Every table is created when a `Memory` opens, in one write
transaction; creating is idempotent (`if_not_exists`), so every process may do it on open.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlite_utils

from fakegang.tools.memory.database_check import stamp_schema
from fakegang.tools.memory.episode_row import EPISODE_SCHEMA
from fakegang.tools.memory.learning_schema import ensure_learning_tables

__all__ = ["add_missing_columns", "ensure_schema", "utc_now"]


def utc_now() -> str:
    """The timestamp every table stores: UTC, ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def ensure_schema(db: sqlite_utils.Database) -> None:
    """Every table of the memory, in one transaction: runs, episodes, steps, reflections,
    trajectories, α and observations with their indexes, then the run-management and learning
    tables; stamps the file's schema version (checked by `fakegang db check`)."""
    with db.atomic():
        _ensure_core_tables(db)
        _ensure_run_tables(db)
        ensure_learning_tables(db)
        # from before the tactics model (their versions keep NULL: no tactics inferred)
        add_missing_columns(db, "weight_versions", {"tactics": str})
        add_missing_columns(db, "steps", {"view": str})  # from before observe's was kept
        stamp_schema(db.conn)  # schema version + application id for `fakegang db check`


def _ensure_core_tables(db: sqlite_utils.Database) -> None:
    t = db.table
    t("runs").create(
        {
            "run_id": str,
            "started_at": str,
            "updated_at": str,
            "status": str,
            "model": str,
            "settings": str,
            "episodes_total": int,
        },
        pk="run_id",
        if_not_exists=True,
    )
    t("episodes").create(
        EPISODE_SCHEMA,
        pk="thread_id",
        if_not_exists=True,
    )
    t("steps").create(
        {
            "thread_id": str,
            "idx": int,
            "action": str,
            "mode": str,
            "rule_action": str,
            "rule_confidence": float,
            "rule_reason": str,
            "llm_status": str,
            "llm_action": str,
            "llm_reason": str,
            "llm_error": str,
            "llm_error_class": str,
            "llm_latency_s": float,
            "llm_tokens": int,
            "llm_prompt_tokens": int,
            "llm_prompt_tokens_reused": int,
            "alpha": float,
            "reward": float,
            "message": str,
            "steps_remaining": int,
            "view": str,  # observe's evidence (JSON): what the viewer shows without checkpoints
        },
        pk=("thread_id", "idx"),
        if_not_exists=True,
    )
    t("reflections").create(
        {
            "id": int,
            "task": str,
            "thread_id": str,
            "text": str,
            "won": int,
            "reward": float,
            "created_at": str,
        },
        pk="id",
        if_not_exists=True,
    )
    t("trajectories").create(
        {
            "task": str,
            "thread_id": str,
            "reward": float,
            "grader_score": float,
            "action_log": str,
            "final_message": str,
            "updated_at": str,
        },
        pk="task",
        if_not_exists=True,
    )
    t("alpha").create(
        {
            "task": str,
            "alpha": float,
            "recent_win_rate": float,
            "n_reflections": int,
            "updated_at": str,
        },
        pk="task",
        if_not_exists=True,
    )
    t("observations").create(
        {"thread_id": str, "action_count": int, "observation": str},
        pk="thread_id",
        if_not_exists=True,
    )
    # databases written before these columns existed get them added (values stay NULL)
    add_missing_columns(
        db,
        "steps",
        {"llm_prompt_tokens": int, "llm_prompt_tokens_reused": int, "llm_error_class": str},
    )
    add_missing_columns(
        db,
        "episodes",
        {
            "kind": str,
            "learns": int,
            "reflection_call": str,
            "reflection_error": str,
            "reflection_error_class": str,
            "operator": str,
        },
    )
    db["episodes"].create_index(["task", "finished_at"], if_not_exists=True)
    db["episodes"].create_index(["run_id", "episode"], if_not_exists=True)
    db["reflections"].create_index(["task", "id"], if_not_exists=True)
    db["reflections"].create_index(["thread_id"], unique=True, if_not_exists=True)


def add_missing_columns(db: sqlite_utils.Database, table: str, columns: dict[str, type]) -> None:
    """Add the columns a database written by an older fakegang lacks (values stay NULL)."""
    existing = db[table].columns_dict
    for name, kind in columns.items():
        if name not in existing:
            db[table].add_column(name, kind)


def _ensure_run_tables(db: sqlite_utils.Database) -> None:
    """The run-management tables (`fakegang runs/resume/fork`, fakegang/runs/records.py)."""
    db["run_owners"].create(
        {"run_id": str, "pid": int, "host": str, "claimed_at": str},
        pk="run_id",
        if_not_exists=True,
    )
    db["forks"].create(
        {
            "thread_id": str,
            "parent_thread_id": str,
            "at_index": int,
            "action": str,
            "original_action": str,
            "run_id": str,
            "created_at": str,
        },
        pk="thread_id",
        if_not_exists=True,
    )
