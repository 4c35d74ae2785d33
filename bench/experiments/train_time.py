"""How long does `make run`'s training take at each of some commits?

    python bench/experiments/train_time.py COMMIT [COMMIT ...] [--args "--model fake"] [--json]

Plays `python train.py` (the embedded defaults, or `--args`) from a throwaway worktree of each
commit, one after the other, each into its own new memory, and prints per commit the wall time,
the episodes' time by task and the local-model calls they made (a run's time follows its calls).
Run it on a quiet machine: the runs are compared with each other, not with older figures.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments.same_figures import commit_tree  # noqa: E402

PHASES = """select task, count(*) as episodes, sum(llm_calls) as llm_calls,
    round(sum((julianday(finished_at) - julianday(started_at)) * 86400), 1) as seconds
  from episodes group by task order by min(episode)"""


def phases(db: Path) -> list[dict]:
    """Per task: episodes, LLM calls and the episodes' seconds of a finished training memory."""
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(PHASES)]


def time_commit(commit: str, args: list[str]) -> dict:
    """`python train.py ARGS` at `commit`: wall seconds and its phases."""
    work = Path(tempfile.mkdtemp(prefix=f"fakegang-train-{commit}-"))
    with commit_tree(commit, work) as (tree, env):
        db = work / "memory.sqlite"
        cmd = [sys.executable, "train.py", *args, "--db", str(db), "--log-dir", str(work / "logs")]
        start = time.perf_counter()
        with open(work / "train.log", "w") as log:
            subprocess.run(cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
        wall = time.perf_counter() - start
    return {"commit": commit, "wall_s": round(wall, 1), "phases": phases(db)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commits", nargs="+")
    ap.add_argument("--args", default="", help="train.py's arguments (default: none)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    runs = [time_commit(c, shlex.split(a.args)) for c in a.commits]
    if a.json:
        print(json.dumps(runs, indent=1))
        return 0
    first = runs[0]["wall_s"]
    print(f"{'commit':<12} {'wall s':>8} {'ratio':>6}  per task: seconds / LLM calls")
    for r in runs:
        tasks = ", ".join(
            f"{p['task']} {p['seconds']:.0f} s / {p['llm_calls']}" for p in r["phases"]
        )
        print(f"{r['commit']:<12} {r['wall_s']:>8.1f} {r['wall_s'] / first:>6.2f}  {tasks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
