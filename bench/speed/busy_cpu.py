"""The training run (`make run` = `python train.py`, local model, curriculum) on a quiet machine
and with one core kept busy by another process: how much longer it takes, and what the LLM
calls did (answered, timed out, not asked again after a timeout).

    python bench/speed/busy_cpu.py [--episodes 50] [--seed-offset 3000] [--fixed-threads]

Each run is `train.py` in a subprocess on a fresh temporary database, timed as a whole (server
start and model load included), quiet first, then while a burner process spins on one core
(pinned there with sched_setaffinity) and is stopped afterwards. `--fixed-threads` adds a third
run, busy, with llama.cpp's thread count pinned to 2 ($FAKEGANG_LLAMA_THREADS=2), which is how
every local call ran before the thread count followed the other processes' load.

The target: busy at most 2.5 times quiet. "Quiet" means no burner of ours: other processes on
the machine still run, so the load average before each run is printed with it.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.speed.env_speed import stop_process  # noqa: E402
from bench.speed.timing import ratio, timed  # noqa: E402
from fakegang.runs.llm_failures import run_llm_failures  # noqa: E402
from fakegang.tools.models.model_settings import LLAMA_THREADS_ENV  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TARGET_RATIO = 2.5
BURNER = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


@contextmanager
def burner(core: int = 0) -> Iterator[int]:
    """A process spinning on `core` for the duration of the block; yields its pid."""
    proc = subprocess.Popen([sys.executable, "-c", BURNER, str(core)])
    try:
        time.sleep(1.0)  # let it take its core before the timed run starts
        if proc.poll() is not None:
            raise RuntimeError(f"the CPU burner exited with code {proc.returncode}")
        yield proc.pid
    finally:
        stop_process(proc, timeout=10)


def timed_training(
    work: Path, label: str, *, episodes: int, seed_offset: int, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """`train.py` on a fresh database in `work/label`; wall time and what its LLM calls did."""
    run_dir = work / label
    run_dir.mkdir(parents=True, exist_ok=True)
    db = run_dir / "agent.sqlite"
    cmd = [
        sys.executable, str(ROOT / "train.py"), "--db", str(db), "--episodes", str(episodes),
        "--seed-offset", str(seed_offset), "--log-dir", str(run_dir / "runs"),
    ]  # fmt: skip
    load = os.getloadavg()[0]
    log = run_dir / "train.log"
    with log.open("w") as fh:
        proc, wall = timed(
            subprocess.run,
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
    if proc.returncode != 0:
        raise RuntimeError(f"train.py exited {proc.returncode}: ...{log.read_text()[-600:]}")
    conn = sqlite3.connect(db)
    try:
        [run_id] = [r[0] for r in conn.execute("select run_id from runs")]
        failures = run_llm_failures(conn, run_id)
        wins = conn.execute("select sum(won) from episodes where run_id = ?", [run_id]).fetchone()
    finally:
        conn.close()
    timeouts = sum(f.error_class == "timeout" for f in failures.failed)
    return {
        "label": label,
        "wall_s": round(wall, 1),
        "load_before": round(load, 2),
        "episodes": episodes,
        "wins": int(wins[0] or 0),
        "llm_calls": failures.calls,
        "llm_failed": len(failures.failed),
        "llm_timeouts": timeouts,
        "episodes_model_not_asked_again": failures.benched_episodes,
    }


def bench(
    work: Path, *, episodes: int = 50, seed_offset: int = 3000, fixed_threads: bool = False
) -> dict[str, Any]:
    """Quiet run, busy run (and, with `fixed_threads`, busy with 2 llama threads)."""
    runs = [timed_training(work, "quiet", episodes=episodes, seed_offset=seed_offset)]
    with burner(0):
        runs.append(timed_training(work, "busy", episodes=episodes, seed_offset=seed_offset))
        if fixed_threads:
            runs.append(
                timed_training(
                    work,
                    "busy, 2 llama threads fixed",
                    episodes=episodes,
                    seed_offset=seed_offset,
                    env={LLAMA_THREADS_ENV: "2"},
                )
            )
    quiet = runs[0]["wall_s"]
    for r in runs:
        r["ratio"] = ratio(r["wall_s"], quiet)
    return {
        "cores": os.cpu_count(),
        "target_ratio": TARGET_RATIO,
        "ratio": runs[1]["ratio"],
        "runs": runs,
    }


def table(result: dict[str, Any]) -> str:
    """The bench's text table (also shown by bench/suite/run_all.py)."""
    if "error" in result:
        return f"BUSY CPU (bench/speed/busy_cpu.py)\n  error: {result['error']}"
    lines = [
        f"BUSY CPU (bench/speed/busy_cpu.py): train.py, local model, "
        f"{result['runs'][0]['episodes']} "
        f"episodes; one of {result['cores']} cores kept busy by a burner process",
        f"  {'run':30s} {'wall':>8s} {'x quiet':>8s} {'load':>5s} {'wins':>5s} {'LLM calls':>9s} "
        f"{'failed':>6s} {'timeouts':>8s} {'not asked again':>15s}",
    ]
    for r in result["runs"]:
        lines.append(
            f"  {r['label']:30s} {r['wall_s']:7.1f}s {r['ratio']:7.2f}x {r['load_before']:5.1f} "
            f"{r['wins']:5d} {r['llm_calls']:9d} {r['llm_failed']:6d} {r['llm_timeouts']:8d} "
            f"{r['episodes_model_not_asked_again']:15d}"
        )
    verdict = "met" if result["ratio"] <= result["target_ratio"] else "NOT met"
    lines.append(
        f"  busy / quiet = {result['ratio']:.2f}x (target at most {result['target_ratio']}x: "
        f"{verdict}); load = 1-minute load average before the run"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=50, help="train.py --episodes (default 50)")
    p.add_argument("--seed-offset", type=int, default=3000, help="train.py --seed-offset")
    p.add_argument(
        "--fixed-threads", action="store_true", help="also run busy with 2 llama threads fixed"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = p.parse_args(argv)
    if args.episodes < 1:
        p.error("--episodes must be at least 1")
    with tempfile.TemporaryDirectory(prefix="fakegang-busy-") as tmp:
        result = bench(
            Path(tmp),
            episodes=args.episodes,
            seed_offset=args.seed_offset,
            fixed_threads=args.fixed_threads,
        )
    print(table(result))
    if args.json:
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
