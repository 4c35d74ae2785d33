"""One episode-row definition: the table, the metrics keys and the result keys agree with it."""

from __future__ import annotations

import sqlite3

from fakegang.tools.episode_row import (
    EPISODE_SCHEMA,
    METRIC_KEYS,
    RESULT_KEYS,
    metrics_row,
)
from fakegang.tools.memory import Memory

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
