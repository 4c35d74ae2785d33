"""`python train.py` end to end in a subprocess: printed lines, metrics.jsonl and memory tables."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEED_KEYS = {
    "episode",
    "task",
    "seed",
    "won",
    "reward",
    "steps_used",
    "recall",
    "precision",
    "action_log",
    "final_message",
    "n_reflections_used",
    "had_few_shot",
    "alpha_used",
    "mode_agree",
    "mode_rule",
    "mode_llm",
    "timestamp",
}
OUR_KEYS = {"grader_score", "llm_calls", "llm_tokens", "run_id", "thread_id"}
EPISODE_LINE = re.compile(
    r"^  Ep +(\d+) \| (easy|medium|hard) +\| (WIN |LOSS) \| reward= *[+-]\d+\.\d\d \| "
    r"recall=\d\.\d\d prec=\d\.\d\d \| steps= *\d+ \| wr=\d+% \| α=\d\.\d\d \| "
    r"agree=\d+ rule=\d+ llm=\d+ \| llm_calls=\d+$"
)


def test_train_py_easy_three_episodes_with_the_stand_in(tmp_path) -> None:
    db, log_dir = tmp_path / "agent.sqlite", tmp_path / "runs"
    proc = subprocess.run(
        [
            sys.executable,
            "train.py",
            "--task",
            "easy",
            "--episodes",
            "3",
            "--model",
            "fake",
            "--db",
            str(db),
            "--log-dir",
            str(log_dir),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "stand-in" in out  # the stand-in model is labelled as such
    assert "OpenEnv server : http://127.0.0.1:" in out and "(embedded)" in out
    episode_lines = [line for line in out.splitlines() if EPISODE_LINE.match(line)]
    assert [int(EPISODE_LINE.match(x).group(1)) for x in episode_lines] == [1, 2, 3]
    assert out.count("└─ learn:") == 3
    assert "FINAL SUMMARY" in out and re.search(r"easy  : \d/3 wins", out)

    rows = [json.loads(line) for line in (log_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["episode"] for r in rows] == [1, 2, 3]
    assert [r["seed"] for r in rows] == [0, 1, 2]  # seeds count up per task
    for r in rows:
        assert set(r) == SEED_KEYS | OUR_KEYS
        assert r["task"] == "easy" and r["final_message"].startswith(("[WIN]", "[LOSS]"))
        assert r["won"] == r["final_message"].startswith("[WIN]")
        assert len(r["action_log"]) == r["mode_agree"] + r["mode_rule"] + r["mode_llm"]
    assert rows[0]["alpha_used"] == 0.2 and rows[0]["n_reflections_used"] == 0
    assert not rows[0]["had_few_shot"]

    conn = sqlite3.connect(db)
    tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
    assert {
        "runs",
        "episodes",
        "steps",
        "reflections",
        "trajectories",
        "alpha",
        "checkpoints",
        "writes",
    } <= tables
    run_id = rows[0]["run_id"]
    assert conn.execute("select status from runs where run_id = ?", [run_id]).fetchone() == (
        "finished",
    )
    assert conn.execute("select count(*) from episodes where run_id = ?", [run_id]).fetchone() == (
        3,
    )
    n_steps = conn.execute("select count(*) from steps").fetchone()[0]
    assert n_steps == sum(len(r["action_log"]) for r in rows)
    n_refl = conn.execute("select count(*) from reflections").fetchone()[0]
    assert 1 <= n_refl <= 3
    # α persisted after the last episode, recomputed from the tables
    (alpha,) = conn.execute("select alpha from alpha where task = 'easy'").fetchone()
    assert 0.2 <= alpha <= 0.5


def test_train_rejects_bad_arguments(tmp_path) -> None:
    for args in (
        ["--task", "impossible"],
        ["--episodes", "0"],
        ["--seed-offset", "-1"],
        ["--model", "nosuchprovider:x"],  # fails before any server starts or row is written
        ["--pause-before", "nosuchnode"],  # node names come from the graph's builder
    ):
        proc = subprocess.run(
            [sys.executable, "train.py", *args, "--db", str(tmp_path / "x.sqlite")],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "error" in proc.stderr.lower()
        assert not (tmp_path / "x.sqlite").exists(), args
