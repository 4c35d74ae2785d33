"""One episode-row definition: the table, the metrics keys and the result keys agree with it."""

from __future__ import annotations

import sqlite3

import pytest

from fakegang.report.html import EPISODE_KEYS
from fakegang.runs.evaluation import comparable
from fakegang.tools.memory.episode_row import (
    COMPARABLE_KEYS,
    EPISODE_SCHEMA,
    METRIC_KEYS,
    REPORT_KEYS,
    RESULT_KEYS,
    _subset,
    metrics_row,
)
from fakegang.tools.memory.store import Memory

SEED_ORDER = (
    "episode", "task", "seed", "won", "reward", "steps_used", "recall", "precision",
    "action_log", "final_message", "n_reflections_used", "had_few_shot", "alpha_used",
    "mode_agree", "mode_rule", "mode_llm", "timestamp",
)  # fmt: skip
OURS = ("grader_score", "llm_calls", "llm_tokens", "run_id", "thread_id")


def test_metric_keys_keep_the_seed_order_then_ours() -> None:
    assert METRIC_KEYS == SEED_ORDER + OURS
    assert RESULT_KEYS == ("won", "reward", "steps_used", "recall", "precision", "grader_score")


def test_the_table_is_the_schema(tmp_path) -> None:
    db = tmp_path / "m.sqlite"
    Memory(db).close()
    cols = [r[1] for r in sqlite3.connect(db).execute("pragma table_info(episodes)")]
    assert cols == list(EPISODE_SCHEMA)


def test_metrics_row_converts_sqlite_values(tmp_path) -> None:
    row = dict.fromkeys(EPISODE_SCHEMA, 0)
    row.update(won=1, had_few_shot=0, action_log='["flag u_1"]', finished_at="2026-12-03T10:00")
    m = metrics_row(row)
    assert list(m) == list(METRIC_KEYS)
    assert m["won"] is True and m["had_few_shot"] is False
    assert m["action_log"] == ["flag u_1"] and m["timestamp"] == "2026-12-03T10:00"
    assert metrics_row({**row, "action_log": None})["action_log"] == []


def test_the_named_subsets_are_fields_of_the_row_and_a_typo_fails() -> None:
    assert EPISODE_KEYS == REPORT_KEYS and set(REPORT_KEYS) <= set(METRIC_KEYS)
    assert REPORT_KEYS[:6] == ("episode", "task", "seed", "won", "reward", "grader_score")
    assert set(COMPARABLE_KEYS) <= set(EPISODE_SCHEMA)
    row = {**dict.fromkeys(EPISODE_SCHEMA, 1), "model": "fake", "index": 3}
    assert list(comparable([row])[0]) == [*COMPARABLE_KEYS, "error", "skipped"]
    with pytest.raises(ValueError, match="not fields of an episode row: \\['grader'\\]"):
        _subset(("won", "grader"), EPISODE_SCHEMA)
