"""The learning tables (credit, experience, weight versions, trace yields, insights) as version 1
of the schema created them (migration 1, tools/memory/migrations.py).

Their rows are written by tools/learning/credit_store.py, tools/learning/experience.py and
tools/learning/insights.py; the definitions live here, beside each other, so that opening a database
creates every table in one write transaction instead of each module creating its own on first use (a
write lock per read).
"""

from __future__ import annotations

import sqlite_utils

__all__ = ["create_learning_tables", "create_trace_yields"]


def create_learning_tables(db: sqlite_utils.Database) -> None:
    """Credit per episode, labelled experience, weight versions, trace yields, insights and
    their votes."""
    t = db.table
    t("credit").create(
        {
            "thread_id": str,
            "task": str,
            "better": int,
            "worse": int,
            "ties": int,
            "llm_calls": int,
            "actions": int,
            "alpha": float,
            "created_at": str,
        },
        pk="thread_id",
        if_not_exists=True,
    )
    t("credit").create_index(["task", "created_at"], if_not_exists=True)
    t("experience").create(
        {
            "thread_id": str,
            "task": str,
            "kind": str,  # profile0 | profile1 | profile | frontier
            "account_id": str,
            "features": str,
            "label": int,
            "weight": float,
            "created_at": str,
        },
        pk=("thread_id", "kind", "account_id"),
        if_not_exists=True,
    )
    t("weight_versions").create(
        {
            "version": int,
            "task": str,
            "thread_id": str,
            "profile": str,
            "frontier": str,
            "n_rows": int,
            "n_episodes": int,
            "tactics": str,  # JSON {"strength", "sd"} per channel inferred, null without drift
            "created_at": str,
        },
        pk="version",
        if_not_exists=True,
    )
    t("experience").create_index(["task", "thread_id"], if_not_exists=True)
    t("weight_versions").create_index(["task", "version"], if_not_exists=True)
    t("weight_versions").create_index(["thread_id"], unique=True, if_not_exists=True)
    t("insights").create(
        {
            "id": int,
            "task": str,
            "key": str,
            "text": str,
            "importance": int,
            "status": str,
            "created_at": str,
            "updated_at": str,
            "last_thread": str,
        },
        pk="id",
        if_not_exists=True,
    )
    t("insights").create_index(["task", "key"], unique=True, if_not_exists=True)
    create_trace_yields(db)
    t("insight_votes").create(
        {"thread_id": str, "ops": str, "at": str}, pk="thread_id", if_not_exists=True
    )


def create_trace_yields(db: sqlite_utils.Database) -> None:
    """Per episode and trace: the pivots run and what they found (also migration 6: files
    stamped 1 before this table existed lack it)."""
    t = db.table
    t("trace_yields").create(
        {
            "key": str,  # "<thread_id>:<trace>"
            "thread_id": str,
            "task": str,
            "trace": str,
            "pivots": int,  # pivots the episode ran on the trace from ring members
            "members": float,  # members those pivots' values held (page share x total)
            "page_members": int,  # members and innocents on their pages
            "page_innocents": int,
            "estimate": float,  # the task's yield of the trace after this episode
            "created_at": str,
        },
        pk="key",
        if_not_exists=True,
    )
    t("trace_yields").create_index(["task", "created_at"], if_not_exists=True)


def create_operator_models(db: sqlite_utils.Database) -> None:
    """Per weights version: the learner of the current operator fitted with it
    (tools/learning/operator_model.py), the errors the episode's pinned model made on its
    debrief (the drift test's stream) and what the learner read. Versions older than this table
    get a row without a model: they were fitted without one."""
    db.table("operator_models").create(
        {
            "version": int,  # weight_versions.version
            "task": str,
            "thread_id": str,
            "model": bytes,  # the fitted model (zlib-compressed pickle), null: none fitted
            "errors": str,  # JSON list: 1 - p(true label) per inspected account of the debrief
            "learner": str,  # JSON: drift cut, the traits' evidence, the sentence
            "created_at": str,
        },
        pk="version",
        if_not_exists=True,
    )
    db.table("operator_models").create_index(["task", "version"], if_not_exists=True)
    db.table("operator_models").create_index(["thread_id"], if_not_exists=True)
    db.execute(
        "insert or ignore into operator_models (version, task, thread_id, errors, created_at) "
        "select version, task, thread_id, '[]', created_at from weight_versions"
    )
