"""Scale-out bench: N hard `--model fake` episodes, sequential vs worker processes vs local Ray.

    python bench/speed/scale_out.py [--episodes 40] [--concurrency 2] [--repeats 3] [--json]

Each run is a separate `fakegang eval` process on a fresh database, timed from its launch to
its exit, so every figure includes interpreter start-up and imports, the embedded environment
server, the worker processes' start (forkserver) or Ray's (`ray.init` of a local instance and
its workers), and the merge of every episode's shard into the database. The three runs' result
rows must be identical (`identical_results`). Targets (a quiet 2-core machine):
worker processes >= 1.7x, Ray >= 1.5x. On a machine shared with other work the ratios are
noisy: the load average at the start of each run is recorded next to it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the checkout: bench.* imports

from bench.speed.timing import median, ratio, timed  # noqa: E402

TARGETS = {"processes": 1.7, "ray": 1.5}
#: Rounds of the three runs; the figures are medians (one round swung Ray from 1.26x to 1.50x).
REPEATS = 3
#: Fields that must not depend on the backend (a subset of tools/memory/episode_row.py
#: COMPARABLE_KEYS).
COMPARED = ("seed", "won", "reward", "grader_score", "steps_used", "final_message", "action_log")


def _fakegang() -> str:
    return str(Path(sys.executable).with_name("fakegang"))


def _ray_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def timed_eval(name: str, extra: list[str], episodes: int, work: Path) -> dict:
    """One `fakegang eval` process; wall time from launch to exit, and its rows."""
    db, out = work / f"{name}.sqlite", work / f"{name}.jsonl"
    cmd = [_fakegang(), "eval", "--task", "hard", "--seeds", f"0-{episodes - 1}"]
    cmd += ["--model", "fake", "--db", str(db), "--out", str(out), "--json", "--no-progress"]
    load = os.getloadavg()[0]
    proc, wall = timed(subprocess.run, [*cmd, *extra], capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: exit {proc.returncode}: {proc.stderr[-800:]}")
    summary = json.loads(proc.stdout)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return {
        "wall_s": round(wall, 1),
        "load_at_start": round(load, 1),
        "backend": summary["backend"],
        "episodes": summary["episodes"],
        "errors": summary["errors"],
        "win_rate": summary["win_rate"],
        "_rows": [{k: r.get(k) for k in COMPARED} for r in rows],
    }


def bench_scale(
    episodes: int = 40,
    concurrency: int = 2,
    work: Path | None = None,
    repeats: int | None = None,
) -> dict:
    """Sequential, `--concurrency N` and `--backend ray --concurrency N`, side by side,
    `repeats` rounds of the three in turn; each figure is the median over the rounds."""
    work = Path(work or tempfile.mkdtemp(prefix="fakegang-scale-"))
    repeats = repeats or REPEATS
    configs = {"sequential": [], "processes": ["--concurrency", str(concurrency)]}
    if _ray_installed():
        configs["ray"] = ["--backend", "ray", "--concurrency", str(concurrency)]
    rounds: dict[str, list[dict]] = {name: [] for name in configs}
    for r in range(repeats):  # interleaved, so a slow spell of the machine hits all three
        for name, extra in configs.items():
            rounds[name].append(timed_eval(f"{name}-{r}", extra, episodes, work))
    base_rows = rounds["sequential"][0]["_rows"]
    base_wall = median(run["wall_s"] for run in rounds["sequential"])
    out: dict = {
        "episodes": episodes, "task": "hard", "concurrency": concurrency, "repeats": repeats,
        "runs": {},
    }  # fmt: skip
    for name, runs in rounds.items():
        walls = [run["wall_s"] for run in runs]
        wall = median(walls)
        run = {k: v for k, v in runs[-1].items() if k not in ("_rows", "wall_s", "load_at_start")}
        run.update(
            wall_s=round(wall, 1),
            walls_s=walls,
            load_at_start=[r["load_at_start"] for r in runs],
            speedup=ratio(base_wall, wall),
            identical_results=all(r["_rows"] == base_rows for r in runs),
            errors=sum(r["errors"] for r in runs),
        )
        if name in TARGETS:
            run["target"] = TARGETS[name]
            run["meets_target"] = run["speedup"] >= TARGETS[name]
        out["runs"][name] = run
    if "ray" not in rounds:
        out["runs"]["ray"] = {"skipped": 'ray extra not installed (pip install "fakegang[ray]")'}
    return out


def table_rows(res: dict) -> list[tuple[str, str]]:
    """The bench table's lines for this section."""
    rows = [
        (
            f"SCALE-OUT ({res['episodes']} hard episodes, --model fake, each run a fresh "
            "`fakegang eval` process, start-up included)",
            "",
        )
    ]
    for name, run in res["runs"].items():
        if "skipped" in run:
            rows.append((f"  {name}", f"skipped: {run['skipped']}"))
            continue
        target = (
            f"; target {run['target']:.1f}x {'met' if run['meets_target'] else 'NOT met'}"
            if "target" in run
            else ""
        )
        rows.append(
            (
                f"  {run['backend']}",
                f"{run['wall_s']:.1f} s  {run['speedup']:.2f}x{target}  (median of "
                f"{', '.join(f'{w:.1f}' for w in run['walls_s'])} s; load at start "
                f"{run['load_at_start']}; identical results: "
                f"{'yes' if run['identical_results'] else 'NO'})",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=40)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--repeats", type=int, default=REPEATS, help="rounds; figures are medians")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if min(args.episodes, args.concurrency, args.repeats) < 1:
        p.error("--episodes, --concurrency and --repeats must be at least 1")
    res = bench_scale(args.episodes, args.concurrency, repeats=args.repeats)
    if args.json:
        print(json.dumps(res))
    else:
        width = max(len(k) for k, _ in table_rows(res))
        print("\n".join(f"{k:<{width}}  {v}".rstrip() for k, v in table_rows(res)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
