"""The main job, measured: a training run (`make run` = `python train.py`) summarised from its
SQLite memory — wall time, LLM calls per task, the share of agree / rule_override / llm
decisions, and the per-call decision latency split by how much of the prompt llama.cpp served
from its KV cache.

    python bench/experiments/training_run.py [--db checkpoints/fakegang.sqlite] [--run-id ID]
    python bench/experiments/training_run.py --train [--seed-offset 1000]  # train.py first, timed

`--train` runs `train.py` (the same program and defaults as `make run`) in a subprocess on a
fresh temporary database, so the time includes the embedded server start and the model load.
Without a run id the latest run in the database that played the most episodes is summarised.

A decision counts as "prefix reused" when at least half of its prompt tokens came from the
KV cache (steps recorded before `llm_prompt_tokens_reused` existed show as unknown).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fakegang.graph.context import DEFAULT_DB_PATH
from fakegang.tools.learning.alpha import MODE_COLUMNS
from fakegang_env.tasks import TASK_NAMES as TASKS

ROOT = Path(__file__).resolve().parents[2]
REUSED_SHARE = 0.5  # at least this share of the prompt from the KV cache = "prefix reused"


def play(db: Path, *, episodes: int, seed_offset: int, log: Path) -> dict[str, Any]:
    """Run `train.py` on `db` and time the whole process (server start and model load too)."""
    cmd = [
        sys.executable, str(ROOT / "train.py"), "--db", str(db), "--episodes", str(episodes),
        "--seed-offset", str(seed_offset), "--log-dir", str(db.parent / "runs"),
    ]  # fmt: skip
    started = time.monotonic()
    with log.open("w") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT, check=False)
    took = time.monotonic() - started
    if proc.returncode != 0:
        tail = log.read_text()[-600:]
        raise RuntimeError(f"train.py exited {proc.returncode}: ...{tail}")
    shown = ["python train.py", "--seed-offset", str(seed_offset)]
    if episodes != 50:
        shown += ["--episodes", str(episodes)]
    return {"process_s": round(took, 1), "command": " ".join(shown)}


def prior_on_the_same_rounds(seed_offset: int, rounds: int) -> dict[str, Any]:
    """The fair baseline of the run's hard phase: the learning agent's starting weights, frozen
    (`prior`), on the same adaptive campaign (campaign = the run's seed offset) and rounds,
    in-process with the rule engine alone (bench/experiments/campaign_curves.py), and the same
    rules-only agent learning, for reference. The operator answers each investigator's own
    takedowns, so the rounds share their campaign seed and opening, not their later playbooks."""
    import tempfile

    if str(ROOT) not in sys.path:  # run by path: the checkout's bench package
        sys.path.insert(0, str(ROOT))
    from bench.experiments.campaign_curves import campaign

    out: dict[str, Any] = {"campaign": seed_offset, "rounds": rounds}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("prior", "learning"):
            played = campaign("hard", "adaptive", seed_offset, rounds, mode, tmp)
            out[f"{mode}_wins"] = sum(bool(r["won"]) for r in played["rounds"])
    return out


def _rows(conn: sqlite3.Connection, sql: str, args: list[Any]) -> list[dict]:
    conn.row_factory = sqlite3.Row
    return [dict(r) for r in conn.execute(sql, args).fetchall()]


def _pick_run(conn: sqlite3.Connection, run_id: str | None) -> dict:
    if run_id:
        runs = _rows(conn, "select * from runs where run_id = ?", [run_id])
        if not runs:
            raise LookupError(f"no run {run_id!r} in this database")
        return runs[0]
    runs = _rows(
        conn,
        "select r.*, count(e.thread_id) as n from runs r join episodes e using (run_id) "
        "where e.status = 'finished' group by r.run_id order by n desc, r.started_at desc",
        [],
    )
    if not runs:
        raise LookupError("no training run with a finished episode in this database")
    return runs[0]


def _seconds(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def _latency(steps: list[dict]) -> dict[str, Any]:
    calls = [s for s in steps if s["llm_status"] in ("ok", "error")]
    reused, cold, unknown = [], [], 0
    for s in calls:
        got, prompt = s.get("llm_prompt_tokens_reused"), s.get("llm_prompt_tokens")
        if got is None or not prompt:
            unknown += 1
        elif got >= REUSED_SHARE * prompt:
            reused.append(s["llm_latency_s"])
        else:
            cold.append(s["llm_latency_s"])
    return {
        "decisions": len(calls),
        "median_s": _median([s["llm_latency_s"] for s in calls if s["llm_latency_s"] is not None]),
        "median_s_prefix_reused": _median(reused),
        "median_s_cold": _median(cold),
        "prefix_reused": len(reused),
        "cold": len(cold),
        "reuse_unknown": unknown,
        "errors": sum(s["llm_status"] == "error" for s in calls),
    }


def summarise(db: str | Path, run_id: str | None = None) -> dict[str, Any]:
    """Figures of one training run, read from its memory tables (read-only)."""
    path = Path(db)
    if not path.is_file():
        raise FileNotFoundError(f"no database at {path}")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        run = _pick_run(conn, run_id)
        episodes = _rows(
            conn,
            "select * from episodes where run_id = ? and status = 'finished' order by episode",
            [run["run_id"]],
        )
        out: dict[str, Any] = {
            "run_id": run["run_id"],
            "status": run["status"],
            "model": run["model"],
            "episodes": len(episodes),
            "episodes_planned": run["episodes_total"],
            "started_at": run["started_at"],
            "wall_s": round(_seconds(run["started_at"], episodes[-1]["finished_at"]), 1)
            if episodes
            else None,
            "tasks": {},
        }
        for task in TASKS:
            rows = [e for e in episodes if e["task"] == task]
            if not rows:
                continue
            threads = [e["thread_id"] for e in rows]
            marks = ",".join("?" * len(threads))
            steps = _rows(conn, f"select * from steps where thread_id in ({marks})", threads)
            modes = {m: sum(e[col] or 0 for e in rows) for m, col in MODE_COLUMNS.items()}
            decisions = sum(modes.values()) or 1
            out["tasks"][task] = {
                "episodes": len(rows),
                "wins": sum(bool(e["won"]) for e in rows),
                "mean_grader": round(statistics.fmean(e["grader_score"] or 0 for e in rows), 3),
                "wall_s": round(sum(_seconds(e["started_at"], e["finished_at"]) for e in rows), 1),
                "llm_calls": sum(e["llm_calls"] or 0 for e in rows),
                "llm_tokens": sum(e["llm_tokens"] or 0 for e in rows),
                "modes": modes,
                "mode_share": {m: round(n / decisions, 3) for m, n in modes.items()},
                "reflections_by_llm": sum("(llm)" in (e["learn_status"] or "") for e in rows),
                "latency": _latency(steps),
            }
        all_steps = _rows(
            conn,
            "select s.* from steps s join episodes e using (thread_id) where e.run_id = ?",
            [run["run_id"]],
        )
        out["latency"] = _latency(all_steps)
        return out
    finally:
        conn.close()


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def table_rows(t: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows; bench/suite/run_all.py puts them in its table."""
    head = f"{t['episodes']}/{t['episodes_planned']} episodes, run {t['run_id']} ({t['model']})"
    rows = [("  run", head)]
    if "process_s" in t:
        rows.append(("  whole process (`" + t["command"] + "`)", f"{t['process_s'] / 60:.1f} min"))
    if t["wall_s"] is not None:
        rows.append(("  first episode start → last episode end", f"{t['wall_s'] / 60:.1f} min"))
    for task, v in t["tasks"].items():
        share = v["mode_share"]
        rows.append(
            (
                f"  {task}",
                f"{v['wins']}/{v['episodes']} wins, grader {v['mean_grader']:.3f}, "
                f"{v['wall_s'] / 60:.1f} min; LLM calls {v['llm_calls']} "
                f"({v['llm_calls'] / v['episodes']:.1f}/ep); modes agree {share['agree']:.0%} / "
                f"rule_override {share['rule_override']:.0%} / llm {share['llm']:.0%}; "
                f"decision median {_s(v['latency']['median_s'])}",
            )
        )
    same = t.get("hard_prior_same_rounds")
    if same and "hard" in t["tasks"]:
        hard = t["tasks"]["hard"]
        rows.append(
            (
                "  hard vs the adaptive operator (campaign "
                f"{same['campaign']}, {same['rounds']} rounds)",
                f"this run {hard['wins']}/{hard['episodes']}; prior (frozen start, rules only) "
                f"{same['prior_wins']}/{same['rounds']}; rules-only learning "
                f"{same['learning_wins']}/{same['rounds']}",
            )
        )
    lat = t["latency"]
    rows.append(
        (
            "  decision latency, median",
            f"all {_s(lat['median_s'])} ({lat['decisions']} calls, {lat['errors']} errors); "
            f"prefix reused {_s(lat['median_s_prefix_reused'])} ({lat['prefix_reused']}); "
            f"cold {_s(lat['median_s_cold'])} ({lat['cold']})"
            + (f"; reuse not recorded for {lat['reuse_unknown']}" if lat["reuse_unknown"] else ""),
        )
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", default=None, help=f"default: {DEFAULT_DB_PATH}")
    p.add_argument("--run-id", default=None)
    p.add_argument("--train", action="store_true", help="run train.py on a fresh database first")
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--seed-offset", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--keep",
        metavar="PATH",
        help="also play `prior` on the run's hard rounds and keep both as JSON at PATH",
    )
    args = p.parse_args(argv)
    played: dict[str, Any] = {}
    if args.train:
        work = Path(tempfile.mkdtemp(prefix="fakegang-training-"))
        db = work / "training.sqlite"
        played = play(db, episodes=args.episodes, seed_offset=args.seed_offset, log=work / "log")
        print(f"[training] log: {work / 'log'}", file=sys.stderr)
    else:
        db = Path(args.db or ROOT / DEFAULT_DB_PATH)
    try:
        summary = {**summarise(db, args.run_id), **played}
    except (FileNotFoundError, LookupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    hard = summary["tasks"].get("hard", {}).get("episodes", 0)
    if args.keep and hard:
        summary["hard_prior_same_rounds"] = prior_on_the_same_rounds(args.seed_offset, hard)
        from bench.experiments.keep_campaign import (  # on sys.path since the call above
            head_commit,
            stamp,
        )

        kept = stamp(summary, datetime.now(UTC), head_commit())
        Path(args.keep).write_text(json.dumps(kept, indent=1) + "\n")
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        rows = table_rows(summary)
        width = max(len(k) for k, _ in rows)
        print("TRAINING RUN")
        print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
