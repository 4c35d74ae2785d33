"""One definition of an episode row, from which everything that names its fields is derived:
the `episodes` table (tools/memory/schema.py), the metrics.jsonl keys and their order (the
original script's seventeen, then ours), the keys of the graph's `result`, the report's episode
table and the evaluation fields that must not depend on scheduling.

Columns are listed in the original script's metrics order, so METRIC_KEYS keeps that order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    type: type
    metric: str | None = None  # its key in metrics.jsonl (None: not a metric)
    to_metric: Callable[[Any], Any] | None = None  # SQLite value → metrics value
    in_result: bool = False  # part of the episode graph's `result`


def _actions(text: str | None) -> list[str]:
    return json.loads(text or "[]")


EPISODE_COLUMNS: tuple[Column, ...] = (
    Column("episode", int, "episode"),
    Column("task", str, "task"),
    Column("seed", int, "seed"),
    Column("won", int, "won", bool, in_result=True),
    Column("reward", float, "reward", in_result=True),
    Column("steps_used", int, "steps_used", in_result=True),
    Column("recall", float, "recall", in_result=True),
    Column("precision", float, "precision", in_result=True),
    Column("action_log", str, "action_log", _actions),  # JSON list in SQLite
    Column("final_message", str, "final_message"),
    Column("n_reflections_used", int, "n_reflections_used"),
    Column("had_few_shot", int, "had_few_shot", bool),
    Column("alpha_used", float, "alpha_used"),
    Column("mode_agree", int, "mode_agree"),
    Column("mode_rule", int, "mode_rule"),
    Column("mode_llm", int, "mode_llm"),
    Column("finished_at", str, "timestamp"),
    Column("grader_score", float, "grader_score", in_result=True),
    Column("llm_calls", int, "llm_calls"),
    Column("llm_tokens", int, "llm_tokens"),
    Column("run_id", str, "run_id"),
    Column("thread_id", str, "thread_id"),
    Column("status", str),
    Column("llm_errors", int),
    Column("learn_status", str),
    Column("started_at", str),
    Column("kind", str),  # what played it: train | campaign | eval | fork | studio | api
    Column("learns", int),  # 1: its outcome was written into the memory training reads
    Column("reflection_call", str),  # ok | error | skipped (timed out before); NULL: none due
    Column("reflection_error", str),
    Column("reflection_error_class", str),
    # an adaptive campaign round's operator debrief (JSON: playbook, survival, reason); NULL else
    Column("operator", str),
)

#: The `episodes` table's columns and types (sqlite-utils schema; primary key thread_id).
EPISODE_SCHEMA: dict[str, type] = {c.name: c.type for c in EPISODE_COLUMNS}
#: metrics.jsonl keys, in order.
METRIC_KEYS: tuple[str, ...] = tuple(c.metric for c in EPISODE_COLUMNS if c.metric)
#: The outcome columns the graph's `result` carries (with final_message and learn_status).
RESULT_KEYS: tuple[str, ...] = tuple(c.name for c in EPISODE_COLUMNS if c.in_result)


def _subset(names: tuple[str, ...], of: tuple[str, ...] | dict[str, type]) -> tuple[str, ...]:
    """`names` unchanged, after checking each is a field of the row (a typo fails at import)."""
    unknown = [n for n in names if n not in of]
    if unknown:
        raise ValueError(f"not fields of an episode row: {unknown}")
    return names


#: The report's per-episode table (metrics keys), in the order it shows them.
REPORT_KEYS: tuple[str, ...] = _subset(
    (
        "episode",
        "task",
        "seed",
        "won",
        "reward",
        "grader_score",
        "steps_used",
        "recall",
        "precision",
        "alpha_used",
        "mode_agree",
        "mode_rule",
        "mode_llm",
        "llm_calls",
        "llm_tokens",
        "n_reflections_used",
        "had_few_shot",
    ),
    METRIC_KEYS,
)
#: Fields of an evaluated episode that must not depend on how the episodes were scheduled
#: (sequential, concurrent, worker processes, Ray): `fakegang eval` compares these.
COMPARABLE_KEYS: tuple[str, ...] = _subset(
    (
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
        "action_log",
    ),
    EPISODE_SCHEMA,
)


def metrics_row(row: dict) -> dict:
    """The original script's metrics keys plus ours, from an `episodes` table row."""
    return {
        c.metric: c.to_metric(row[c.name]) if c.to_metric else row[c.name]
        for c in EPISODE_COLUMNS
        if c.metric
    }
