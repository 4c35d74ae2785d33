"""The memory's tables: version 1 of the schema as created fresh, and what each table is for.

`create_version_1` is migration 1 (tools/memory/migrations.py, where later changes go); it stays as
it shipped, since files in the wild have counted it. The learning tables are in
tools/memory/learning_schema.py; the episode row (tools/memory/episode_row.py) names no column the
migrated `episodes` table lacks (tested). `TABLE_ROLES` says what each table holds, and
`current_columns()` gives every table's columns after all migrations (LangGraph's checkpoint
tables included): the database check and the shard merge derive their facts from these two.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from functools import cache

import sqlite_utils

from fakegang.tools.memory.learning_schema import create_learning_tables

__all__ = [
    "CHECKPOINT_TABLES",
    "EPISODE",
    "KNOWLEDGE",
    "BOOKKEEPING",
    "RUN",
    "TABLE_ROLES",
    "create_version_1",
    "current_columns",
    "current_tables_sql",
    "key_columns",
    "tables_of",
    "utc_now",
]

#: Roles: what a table holds, which decides how it travels between a shard and the main file.
RUN = "run"  # run management (runs, ownership, forks); a shard's `runs` row merges by run id
EPISODE = "episode"  # an episode's rows by thread id: played in a shard, merged back
KNOWLEDGE = "knowledge"  # what the agent learned: copied into every shard, read while playing
BOOKKEEPING = "bookkeeping"  # learning records neither copied into a shard nor merged back

#: LangGraph's SqliteSaver tables (its own schema, created by `SqliteSaver.setup()`).
CHECKPOINT_TABLES = ("checkpoints", "writes")

TABLE_ROLES: dict[str, str] = {
    "runs": RUN,
    "run_owners": RUN,
    "forks": RUN,
    "episodes": EPISODE,
    "steps": EPISODE,
    "observations": EPISODE,
    "checkpoints": EPISODE,
    "writes": EPISODE,
    "reflections": KNOWLEDGE,
    "trajectories": KNOWLEDGE,
    "alpha": KNOWLEDGE,
    "experience": KNOWLEDGE,
    "weight_versions": KNOWLEDGE,
    "credit": KNOWLEDGE,
    "insights": KNOWLEDGE,
    "operator_models": KNOWLEDGE,
    "trace_yields": KNOWLEDGE,
    "insight_votes": BOOKKEEPING,
}


def utc_now() -> str:
    """The timestamp every table stores: UTC, ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def create_version_1(db: sqlite_utils.Database) -> None:
    """Migration 1: runs, episodes, steps, reflections, trajectories, α and observations with
    their indexes, the run-management tables, then the learning tables (`if_not_exists`: files
    stamped 1 before migrations existed have some of them)."""
    _create_core_tables(db)
    _create_run_tables(db)
    create_learning_tables(db)


def tables_of(role: str) -> tuple[str, ...]:
    """The tables of `role`, in `TABLE_ROLES` order."""
    return tuple(name for name, r in TABLE_ROLES.items() if r == role)


@cache
def current_tables_sql() -> dict[str, str]:
    """name -> CREATE statement of every table after all migrations, LangGraph's included (made
    once per process in an in-memory database)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from fakegang.tools.memory.migrations import migrate

    ref = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        migrate(sqlite_utils.Database(ref))
        SqliteSaver(ref).setup()
        rows = ref.execute(
            "select name, sql from sqlite_master where type = 'table' and sql is not null "
            "and name not like 'sqlite_%'"
        ).fetchall()
    finally:
        ref.close()
    return dict(rows)


@cache
def current_columns() -> dict[str, tuple[str, ...]]:
    """Every table after all migrations (LangGraph's included) -> its columns, in order."""
    ref = sqlite3.connect(":memory:")
    try:
        for sql in current_tables_sql().values():
            ref.execute(sql)
        return {
            name: tuple(r[1] for r in ref.execute(f'PRAGMA table_info("{name}")'))
            for name in current_tables_sql()
        }
    finally:
        ref.close()


@cache
def key_columns() -> dict[str, frozenset[str]]:
    """Per table, the columns every file this code reads has (`fakegang db check` requires
    them): version 1's fresh columns but those migrations 2-5 may have had to add; tables added
    later have all theirs; LangGraph's tables their primary key."""
    from fakegang.tools.memory.migrations import LATE_V1_COLUMNS

    late: dict[str, set[str]] = {}
    for table, columns in LATE_V1_COLUMNS:
        late.setdefault(table, set()).update(columns)
    ref = sqlite3.connect(":memory:")
    try:
        create_version_1(sqlite_utils.Database(ref))
        version_1 = {
            name: {r[1] for r in ref.execute(f'PRAGMA table_info("{name}")')}
            for (name,) in ref.execute("select name from sqlite_master where type = 'table'")
        }
    finally:
        ref.close()
    out: dict[str, frozenset[str]] = {}
    for table, columns in current_columns().items():
        if table in CHECKPOINT_TABLES:
            out[table] = _primary_key(table)
        elif table in version_1:
            out[table] = frozenset(version_1[table] - late.get(table, set()))
        else:
            out[table] = frozenset(columns)
    return out


def _primary_key(table: str) -> frozenset[str]:
    ref = sqlite3.connect(":memory:")
    try:
        ref.execute(current_tables_sql()[table])
        return frozenset(r[1] for r in ref.execute(f'PRAGMA table_info("{table}")') if r[5])
    finally:
        ref.close()


#: The `episodes` columns of version 1, frozen here: a column added to the episode row
#: (tools/memory/episode_row.py) reaches files through a new migration, not by changing this.
_EPISODES_V1: dict[str, type] = {
    "episode": int,
    "task": str,
    "seed": int,
    "won": int,
    "reward": float,
    "steps_used": int,
    "recall": float,
    "precision": float,
    "action_log": str,
    "final_message": str,
    "n_reflections_used": int,
    "had_few_shot": int,
    "alpha_used": float,
    "mode_agree": int,
    "mode_rule": int,
    "mode_llm": int,
    "finished_at": str,
    "grader_score": float,
    "llm_calls": int,
    "llm_tokens": int,
    "run_id": str,
    "thread_id": str,
    "status": str,
    "llm_errors": int,
    "learn_status": str,
    "started_at": str,
    "kind": str,
    "learns": int,
    "reflection_call": str,
    "reflection_error": str,
    "reflection_error_class": str,
    "operator": str,
}


def _create_core_tables(db: sqlite_utils.Database) -> None:
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
        _EPISODES_V1,
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
    db["episodes"].create_index(["task", "finished_at"], if_not_exists=True)
    db["episodes"].create_index(["run_id", "episode"], if_not_exists=True)
    db["reflections"].create_index(["task", "id"], if_not_exists=True)
    db["reflections"].create_index(["thread_id"], unique=True, if_not_exists=True)


def _create_run_tables(db: sqlite_utils.Database) -> None:
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
