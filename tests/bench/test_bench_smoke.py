"""`python bench/suite/run_all.py --quick`: the bench runs end to end, writes its table and JSON.

Quick settings (3 seeds per task, 4 timed hard episodes, one calibration episode per task), no
local-model latency (`--skip-llm`: it alone costs ~30 s of cold prompt evaluation), no hybrid
run (`--skip-hybrid`), and the training section summarising a small real training memory
(`--training-db`) instead of playing the 50-episode `train.py`. About 50 s on 2 cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN_ALL = "bench/suite/run_all.py"  # run from ROOT
TASKS = ("easy", "medium", "hard")


def _training_memory(env_url: str, tmp_path: Path) -> tuple[Path, str]:
    """A real (small) training run's memory: 2 easy episodes with the stand-in model."""
    import io

    from fakegang.graph.context import Context
    from fakegang.runs.runner import TrainOptions, train

    db = tmp_path / "training.sqlite"
    opts = TrainOptions(
        context=Context(model="fake", db_path=str(db)),
        env_url=env_url,
        task="easy",
        episodes=2,
        log_dir=str(tmp_path / "runs"),
    )
    run = train(opts, out=io.StringIO())
    return db, run["run_id"]


@pytest.mark.slow  # a whole quick bench (about 100 s): CI runs it with `make test-slow`
def test_quick_bench_prints_one_table_and_writes_json(env_url, tmp_path) -> None:
    out_dir = tmp_path / "results"
    db, run_id = _training_memory(env_url, tmp_path)
    cmd = [sys.executable, RUN_ALL, "--quick", "--skip-llm", "--skip-hybrid"]
    proc = subprocess.run(
        [*cmd, "--training-db", str(db), "--out-dir", str(out_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    latest = out_dir / "latest-quick.json"
    assert sorted(p.name for p in out_dir.iterdir()) == [latest.name]  # no dated copy beside it
    r = json.loads(latest.read_text())
    assert proc.stdout.strip() == r["table"]
    assert r["quick"] is True and r["seeds"] == [0, 1, 2]

    for name in (
        "env",
        "resources",
        "load",
        "graph",
        "policies",
        "rules_agent",
        "scale",
        "calibration",
        "tactics",
    ):
        assert "error" not in r[name], (name, r[name])
    env = r["env"]
    for key in ("in_process_steps_per_s", "http_steps_per_s", "ws_steps_per_s"):
        assert env[key] > 0
    assert env["hard_obs_bytes_last"] > env["hard_obs_bytes_reset"] > 0
    res = r["resources"]
    assert res["peak_rss_mb"] >= res["idle_rss_mb"] > 0 and res["slowest_episode_s"] > 0
    graph = r["graph"]
    assert graph["overhead_ms_per_action"] > 0 and graph["checkpoint_bytes_per_episode"] > 10_000
    assert 0 < graph["env_share_of_wall"] < 1
    load = r["load"]
    assert load["episodes"] == 8 and load["errors"] == 0 and load["requests"] > 8
    assert load["requests_per_s"] > 0 and 0 < load["p50_ms"] <= load["p99_ms"] <= load["max_ms"]
    assert r["llm"] == {"skipped": "--skip-llm"}
    assert "skipped" in r["hybrid"]
    training = r["training"]
    assert training["episodes"] == training["episodes_planned"] == 2
    assert training["tasks"]["easy"]["wins"] <= 2 and "hard" not in training["tasks"]
    assert training["run_id"] == run_id and training["model"] == "fake"

    for task in TASKS:
        for policy in ("random", "naive"):
            q = r["policies"][task][policy]
            assert q["episodes"] == 3 and 0 <= q["win_rate"] <= 1
        q = r["rules_agent"]["quality"][task]
        assert q["episodes"] == 3 and q["seeds"] == [0, 1, 2] and q["errors"] == 0
        assert q["llm_calls_per_episode"] == 0  # fresh memory: α at its floor, rules decide
    scale = r["scale"]
    assert scale["episodes"] == 4 and set(scale["runs"]) == {"sequential", "processes", "ray"}
    for name, run in scale["runs"].items():
        if "skipped" in run:  # only without the ray extra
            assert name == "ray" and "fakegang[ray]" in run["skipped"]
            continue
        assert run["identical_results"] is True and run["errors"] == 0 and run["speedup"] > 0
        assert run["episodes"] == 4 and run["wall_s"] > 0

    cal = r["calibration"]
    assert cal["flags"] > 0 and cal["bins"]
    assert sum(b["n"] for b in cal["bins"]) == cal["flags"]
    for b in cal["bins"]:
        assert 0 <= b["share_in_ring"] <= 1 and 0 <= b["mean_confidence"] <= 1

    tac = r["tactics"]
    assert [(row["task"], row["tactics"]) for row in tac["rows"]] == [
        ("hard", "classic"),
        ("hard", "mixed"),
    ]
    for row in tac["rows"]:
        assert row["oracle"]["win_rate"] == 1.0 and 0 <= row["f1_refit"] <= 1
    assert set(r["tactics_speed"]["per_tactics"]) >= {"classic", "mixed", "loose_cells"}

    table = proc.stdout
    for heading in (
        "ENVIRONMENT",
        "SERVER RESOURCES",
        "LOAD",
        "GRAPH",
        "LOCAL MODEL LATENCY",
        "DETECTION QUALITY",
        "SCALE-OUT",
        "RULE FLAG CALIBRATION",
        "TRAINING RUN",
        "GENERATIONS",
    ):
        assert heading in table
    assert "2/2 episodes, run " in table and "decision latency, median" in table
    for task in TASKS:
        assert f"{task}: rules-only agent" in table and f"{task}: naive" in table


def test_bench_rejects_bad_arguments(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, RUN_ALL, "--concurrency", "0", "--out-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "must be at least 1" in proc.stderr
    assert not list(tmp_path.iterdir())
