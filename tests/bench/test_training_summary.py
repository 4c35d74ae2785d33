"""bench/experiments/training_run.py: a training run's figures, read back from its SQLite memory."""

from __future__ import annotations

import io
import sqlite3

import pytest
from bench_modules import load_bench

from fakegang.tools.memory.store import Memory

training_run = load_bench("training_run")


def _episode(mem: Memory, n: int, task: str, start: str, end: str, **counts) -> str:
    thread = f"t{n}"
    mem.upsert_episode(
        {
            "thread_id": thread,
            "run_id": "r1",
            "episode": n,
            "task": task,
            "seed": n,
            "status": "finished",
            "won": 1,
            "grader_score": 0.9,
            "started_at": start,
            "finished_at": end,
            "learn_status": "success reflection (llm): stored",
            "mode_agree": counts.get("agree", 0),
            "mode_rule": counts.get("rule", 0),
            "mode_llm": counts.get("llm", 0),
            "llm_calls": counts.get("calls", 0),
            "llm_tokens": 100,
        }
    )
    return thread


def _step(mem: Memory, thread: str, idx: int, status: str, latency: float | None, reused, prompt):
    mem.upsert_step(
        {
            "thread_id": thread,
            "idx": idx,
            "action": "submit",
            "mode": "agree",
            "llm_status": status,
            "llm_latency_s": latency,
            "llm_prompt_tokens": prompt,
            "llm_prompt_tokens_reused": reused,
        }
    )


def test_summary_splits_latency_by_kv_cache_reuse(tmp_path) -> None:
    db = tmp_path / "mem.sqlite"
    mem = Memory(db)
    mem.upsert_run(
        {
            "run_id": "r1",
            "started_at": "2026-12-02T10:00:00+00:00",
            "status": "finished",
            "model": "local",
            "episodes_total": 3,
        }
    )
    a = _episode(
        mem,
        1,
        "easy",
        "2026-12-02T10:00:05+00:00",
        "2026-12-02T10:01:05+00:00",
        agree=2,
        rule=6,
        calls=3,
    )
    b = _episode(
        mem,
        2,
        "medium",
        "2026-12-02T10:01:05+00:00",
        "2026-12-02T10:03:00+00:00",
        agree=1,
        rule=2,
        llm=1,
        calls=2,
    )
    _step(mem, a, 0, "ok", 5.0, 10, 700)  # cold: 10 of 700 tokens from the cache
    _step(mem, a, 1, "ok", 2.0, 600, 700)
    _step(mem, a, 2, "error", 4.0, 500, 700)
    _step(mem, a, 3, "skipped", None, None, None)  # the rule was sure: no call
    _step(mem, b, 0, "ok", 3.0, None, 700)  # a provider that does not report reuse
    _step(mem, b, 1, "ok", 1.0, 650, 700)
    mem.close()

    s = training_run.summarise(db)
    assert (s["run_id"], s["episodes"], s["episodes_planned"]) == ("r1", 2, 3)
    assert s["wall_s"] == 180.0  # run start to the last episode's end
    easy, medium = s["tasks"]["easy"], s["tasks"]["medium"]
    assert easy["llm_calls"] == 3 and easy["wall_s"] == 60.0 and easy["reflections_by_llm"] == 1
    assert easy["mode_share"] == {"agree": 0.25, "rule_override": 0.75, "llm": 0.0}
    assert easy["latency"] == {
        "decisions": 3, "median_s": 4.0, "median_s_prefix_reused": 3.0, "median_s_cold": 5.0,
        "prefix_reused": 2, "cold": 1, "reuse_unknown": 0, "errors": 1,
    }  # fmt: skip
    assert medium["latency"]["reuse_unknown"] == 1 and medium["latency"]["prefix_reused"] == 1
    assert "hard" not in s["tasks"]
    assert s["latency"]["decisions"] == 5 and s["latency"]["median_s"] == 3.0

    rows = dict(training_run.table_rows(s))
    assert "2/3 episodes" in rows["  run"]
    assert "reuse not recorded for 1" in rows["  decision latency, median"]


def test_summary_of_a_real_training_run(env_url, tmp_path) -> None:
    from fakegang.graph.context import Context
    from fakegang.runs.runner import TrainOptions, train

    db = tmp_path / "mem.sqlite"
    Memory(db).save_alpha("easy", 0.99, 1.0, 0)  # trust the LLM so it is asked at most steps
    opts = TrainOptions(
        context=Context(model="fake", db_path=str(db), alpha_rule="seed"),
        env_url=env_url,
        task="easy",
        episodes=2,
        log_dir=str(tmp_path / "runs"),
    )
    run = train(opts, out=io.StringIO())

    s = training_run.summarise(db)
    assert s["run_id"] == run["run_id"] and s["episodes"] == 2 and s["status"] == "finished"
    conn = sqlite3.connect(db)
    calls = conn.execute("select sum(llm_calls) from episodes").fetchone()[0]
    asked = conn.execute(
        "select count(*), min(llm_prompt_tokens) from steps where llm_status in ('ok', 'error')"
    ).fetchone()
    conn.close()
    assert calls > 0 and s["tasks"]["easy"]["llm_calls"] == calls == asked[0]
    assert asked[1] > 0  # the prompt size is recorded with every call
    lat = s["latency"]
    assert lat["decisions"] == calls and lat["median_s"] is not None
    assert lat["reuse_unknown"] == calls  # the stand-in has no KV cache to report on
    assert sum(s["tasks"]["easy"]["mode_share"].values()) == pytest.approx(1.0, abs=0.002)


def test_cli_errors_are_clear(tmp_path, capsys) -> None:
    assert training_run.main(["--db", str(tmp_path / "missing.sqlite")]) == 2
    assert "no database at" in capsys.readouterr().err
    db = tmp_path / "empty.sqlite"
    Memory(db).close()
    assert training_run.main(["--db", str(db)]) == 2
    assert "no training run" in capsys.readouterr().err
    assert training_run.main(["--db", str(db), "--run-id", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
