"""One definition of an episode row, from which everything that names its fields is derived:
the `episodes` table (tools/memory.py), the metrics.jsonl keys and their order (the seed's
seventeen, then ours), the keys of the graph's `result`, and so the report's and bench's rows.

Columns are listed in the seed's metrics order, so METRIC_KEYS keeps that order.
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
)

#: The `episodes` table's columns and types (sqlite-utils schema; primary key thread_id).
EPISODE_SCHEMA: dict[str, type] = {c.name: c.type for c in EPISODE_COLUMNS}
#: metrics.jsonl keys, in order.
METRIC_KEYS: tuple[str, ...] = tuple(c.metric for c in EPISODE_COLUMNS if c.metric)
#: The outcome columns the graph's `result` carries (with final_message and learn_status).
RESULT_KEYS: tuple[str, ...] = tuple(c.name for c in EPISODE_COLUMNS if c.in_result)


def metrics_row(row: dict) -> dict:
    """The seed's metrics keys plus ours, from an `episodes` table row."""
    return {
        c.metric: c.to_metric(row[c.name]) if c.to_metric else row[c.name]
        for c in EPISODE_COLUMNS
        if c.metric
    }
