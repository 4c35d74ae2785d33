"""`make bench`: one table of the environment's speed, the agent's overhead and its quality.

    python bench/run_all.py [--quick] [--hybrid-db PATH] [--skip-hybrid] [--json]

Sections (each fails on its own: an error is shown in its row, the others still run):
* env: hard network generation, steps/s in-process / HTTP / WebSocket, hard observation size
  (bench/env_speed.py's functions, against the one server process the bench starts);
* graph: a hard episode through the graph with `--model fake` on a fresh SQLite memory (the
  training path: SQLite checkpointer, durability sync, memory writes); overhead per action =
  (episode wall time - time inside environment HTTP calls - LLM time) / actions, and the
  checkpoint bytes the episode added (checkpoint + writes blobs) and the database growth;
* llm: local-model decision latency, median, with the KV-cache prefix reused and cold
  (bench/llm_latency.py's agent prompts); "skipped" when llama_cpp is not installed;
* quality per task on seeds 0-49: `random` and `naive` (fakegang_env.policies.run_policy,
  in-process), the rules-only agent (the graph with `--model fake` on a fresh memory, so α stays
  at its floor and the rules decide) and the hybrid agent with the local model after training;
* training (the main job): `train.py` — the program `make run` runs, 50-episode curriculum with
  the local model — played in a subprocess on a fresh database with `--seed-offset 1000` (so the
  hybrid evaluation seeds 0-2 are unseen), timed, and summarised by bench/training_run.py: LLM
  calls per task, agree / rule_override / llm shares, decision latency with and without the
  KV-cache prefix reused;
* concurrency: wall time of 40 hard rules-agent episodes played sequentially / with
  `--concurrency 8` against one server process (their results must be identical);
* calibration: the rule engine's FLAG proposals (`steps.rule_action = 'flag ...'`) of learning
  runs written by this bench, binned by `rule_confidence`: share truly in the ring
  (`generate_network(task, seed).gang_ids`) vs the bin's mean confidence.

Hybrid (the local model costs seconds per decision on 2 shared cores, so seeds 0-49 of three
tasks would take hours): the memory the training section left (lessons, best trajectories, α
per task) is evaluated on seeds 0-2 of each task within a wall-time budget
(`--hybrid-budget-min`, 12, shared out task by task); episodes not started within it are
reported as skipped (a started hard episode may overrun it by a few minutes).
`--training-db PATH` summarises an existing training run instead of playing one (and its memory
is the hybrid's); `--hybrid-db PATH` evaluates another memory; `--hybrid-seeds 0-49` widens the
evaluation. `--skip-training` (and `--quick`) skip the 20-27 minute training run.

Writes bench/results/latest.json and a dated copy (`--quick`: latest-quick.json).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import env_speed  # noqa: E402  (bench/env_speed.py)
import training_run  # noqa: E402  (bench/training_run.py)

from fakegang.cli_agent import parse_seed_range  # noqa: E402
from fakegang.graph import resources  # noqa: E402
from fakegang.graph.context import Context  # noqa: E402
from fakegang.graph.graph import compile_with_sqlite  # noqa: E402
from fakegang.runs.evaluation import comparable, evaluate  # noqa: E402
from fakegang.runs.runner import TrainOptions, run_episode, train  # noqa: E402
from fakegang.tools.alpha import MODE_COLUMNS  # noqa: E402
from fakegang_env.generator import generate_network  # noqa: E402
from fakegang_env.policies import run_policy  # noqa: E402

TASKS = ("easy", "medium", "hard")
CAL_BINS = [0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001]


# ---------------------------------------------------------------------------------- helpers
def section(name: str, results: dict, fn: Callable[[], Any]) -> None:
    """Run one bench section; a failure is recorded (and shown) instead of ending the bench."""
    started = time.monotonic()
    print(f"[bench] {name} ...", file=sys.stderr, flush=True)
    try:
        results[name] = fn()
    except Exception as exc:  # noqa: BLE001 - a bench reports, it does not trace back
        traceback.print_exc(file=sys.stderr)
        results[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    took = time.monotonic() - started
    results.setdefault("section_s", {})[name] = round(took, 1)
    print(f"[bench] {name} done in {took:.0f} s", file=sys.stderr, flush=True)


def clear_process_caches() -> None:
    """Drop the rule engine's pairwise-evidence cache so timed runs start equally cold."""
    from fakegang.tools import evidence

    evidence._PAIR_VOTES.clear()


def llama_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def quality_row(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r and not r.get("skipped")]
    n = len(ok)
    if not n:
        return {"episodes": 0}
    return {
        "episodes": n,
        "seeds": [r["seed"] for r in ok],
        "win_rate": round(sum(bool(r["won"]) for r in ok) / n, 4),
        "mean_grader": round(sum(r["grader_score"] or 0 for r in ok) / n, 4),
        "mean_steps": round(sum(r["steps_used"] for r in ok) / n, 2),
        "llm_calls_per_episode": round(sum(r.get("llm_calls", 0) for r in ok) / n, 2),
        "modes": {mode: sum(r.get(key, 0) for r in ok) for mode, key in MODE_COLUMNS.items()},
        "errors": sum("error" in r for r in rows),
        "skipped": sum(bool(r.get("skipped")) for r in rows),
    }


# ---------------------------------------------------------------------------------- sections
def bench_env(n_seeds: int, url: str, server_pid: int) -> dict:
    """bench/env_speed.py's measurements, against the bench's own server process."""
    generation = env_speed.bench_generation(list(range(max(5, n_seeds))))
    episodes = {seed: env_speed.record_actions(seed) for seed in range(n_seeds)}
    in_process = env_speed.bench_in_process(episodes)
    http = env_speed.bench_http(url, episodes, server_pid)
    ws = env_speed.bench_ws(url, episodes)
    return {
        "episodes": n_seeds,
        "generation_ms_median": round(generation["median_s"] * 1000, 1),
        "generation_ms_max": round(generation["max_s"] * 1000, 1),
        "in_process_steps_per_s": round(in_process["steps_per_s"]),
        "http_steps_per_s": round(http["steps_per_s"]),
        "ws_steps_per_s": round(ws["steps_per_s"]),
        "hard_obs_bytes_reset": http["reset_bytes"],
        "hard_obs_bytes_last": http["final_bytes"],
    }


def _timed_env_calls(ctx: Context) -> list[float]:
    """Wrap the shared environment client so every HTTP call's wall time is recorded."""
    client = resources.env_client(ctx)
    spent: list[float] = []
    inner = client._request

    def timed(*args: Any, **kwargs: Any) -> dict:
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - t0)

    client._request = timed  # type: ignore[method-assign]
    return spent


def _checkpoint_bytes(db: Path, thread_id: str) -> int:
    conn = sqlite3.connect(str(db))
    try:
        a = conn.execute(
            "select coalesce(sum(length(checkpoint) + length(metadata)), 0) from checkpoints "
            "where thread_id = ?",
            [thread_id],
        ).fetchone()[0]
        b = conn.execute(
            "select coalesce(sum(length(value)), 0) from writes where thread_id = ?", [thread_id]
        ).fetchone()[0]
        return int(a + b)
    finally:
        conn.close()


def _db_bytes(db: Path) -> int:
    """Size of the database file after folding its WAL into it."""
    conn = sqlite3.connect(str(db))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return db.stat().st_size


def bench_graph(env_url: str, seeds: list[int], work: Path) -> dict:
    """Overhead per action and checkpoint bytes of hard episodes, each on a fresh memory."""
    per_action, per_step, ckpt, growth, env_share, n_actions = [], [], [], [], [], []
    for seed in seeds:
        db = work / f"overhead-{seed}.sqlite"
        ctx = Context(env_url=env_url, db_path=str(db), model="fake", learn=True)
        app = compile_with_sqlite(db)
        resources.memory(ctx)  # create the tables before measuring the growth
        before = _db_bytes(db)
        spent = _timed_env_calls(ctx)
        clear_process_caches()
        t0 = time.perf_counter()
        thread_id = run_episode(app, ctx, run_id="bench", episode=seed, task="hard", seed=seed)
        wall = time.perf_counter() - t0
        mem = resources.memory(ctx)
        steps = mem.steps(thread_id)
        row = mem.episode(thread_id)
        llm_s = sum(s["llm_latency_s"] or 0.0 for s in steps)
        overhead = wall - sum(spent) - llm_s
        per_action.append(overhead / len(steps) * 1000)
        per_step.append(overhead / max(1, row["steps_used"]) * 1000)
        env_share.append(sum(spent) / wall)
        app.checkpointer.conn.commit()
        ckpt.append(_checkpoint_bytes(db, thread_id))
        resources.reset_all()
        app.checkpointer.conn.close()
        growth.append(_db_bytes(db) - before)
        n_actions.append(len(steps))
    return {
        "episodes": len(seeds),
        "actions_per_episode": round(statistics.mean(n_actions), 1),
        "overhead_ms_per_action": round(statistics.median(per_action), 2),
        "overhead_ms_per_budget_step": round(statistics.median(per_step), 2),
        "env_share_of_wall": round(statistics.median(env_share), 3),
        "checkpoint_bytes_per_episode": int(statistics.median(ckpt)),
        "db_growth_bytes_per_episode": int(statistics.median(growth)),
        "_dbs": [str(work / f"overhead-{s}.sqlite") for s in seeds],
    }


def bench_llm(calls: int, cold_calls: int) -> dict:
    if not llama_available():
        return {"skipped": "llama_cpp not installed"}
    import llm_latency  # bench/llm_latency.py

    from fakegang.tools.chat_models import ModelSettings, make_chat_model
    from fakegang.tools.llm import decide

    settings = ModelSettings(spec="local", timeout_s=300.0, max_retries=0)
    t0 = time.monotonic()
    model = make_chat_model(settings)
    load_s = time.monotonic() - t0
    llama = llm_latency._llama_of(model)
    prompts, _, source = llm_latency.episode_prompts(max(calls, cold_calls) + 1)

    def one(p):
        system, user, choices = p
        return decide(model, system=system, user=user, choices=choices, settings=settings)

    cold = []
    for p in prompts[1 : cold_calls + 1]:
        llama.reset()
        cold.append(one(p))
    llama.reset()
    one(prompts[0])  # an episode's first call pays for the stable prefix once
    warm, reused = [], []
    for p in prompts[1 : calls + 1]:
        result, n = llm_latency._reused(llama, lambda p=p: one(p))
        warm.append(result)
        reused.append(n)
    out = {
        "model": "local SmolLM2-135M-Instruct (llama.cpp)",
        "prompts": source,
        "load_s": round(load_s, 2),
        "decisions_prefix_reused": len(warm),
        "median_s_prefix_reused": round(statistics.median(r.latency_s for r in warm), 2),
        "prompt_tokens_median": int(statistics.median(r.tokens_in for r in warm)),
        "reused_tokens_median": int(statistics.median(reused)),
        "new_tokens_median": llm_latency._new_tokens(warm, reused),
        "ok": sum(r.ok for r in warm + cold),
        "calls": len(warm) + len(cold),
    }
    if cold:
        out["decisions_cold"] = len(cold)
        out["median_s_cold"] = round(statistics.median(r.latency_s for r in cold), 2)
    resources.reset_all()
    return out


def bench_policies(seeds: list[int]) -> dict:
    out: dict[str, dict] = {}
    for policy in ("random", "naive"):
        for task in TASKS:
            rows = [run_policy(policy, task, s) for s in seeds]
            out.setdefault(task, {})[policy] = quality_row(rows)
    return out


def bench_rules_agent(
    env_url: str, seeds: list[int], ratio_seeds: list[int], concurrency: int, work: Path
) -> dict:
    """Rules-only agent quality per task, and the sequential/concurrent wall-time ratio on hard
    (the timed hard episodes double as part of the hard quality sample)."""
    db = str(work / "fresh-rules.sqlite")  # read-only evaluation: α stays at its floor
    quality: dict[str, dict] = {}
    kw = dict(model="fake", db=db, env_url=env_url)
    clear_process_caches()
    t0 = time.perf_counter()
    seq = evaluate(task="hard", seeds=ratio_seeds, **kw)
    seq_s = time.perf_counter() - t0
    clear_process_caches()
    t0 = time.perf_counter()
    con = evaluate(task="hard", seeds=ratio_seeds, concurrency=concurrency, **kw)
    con_s = time.perf_counter() - t0
    identical = comparable(seq["results"]) == comparable(con["results"])
    ratio = {
        "episodes": len(ratio_seeds),
        "task": "hard",
        "concurrency": concurrency,
        "sequential_s": round(seq_s, 1),
        "concurrent_s": round(con_s, 1),
        "ratio": round(seq_s / con_s, 2),
        "identical_results": identical,
    }
    for task in TASKS:
        done = {r["seed"]: r for r in seq["results"]} if task == "hard" else {}
        rest = [s for s in seeds if s not in done]
        if rest:
            res = evaluate(task=task, seeds=rest, concurrency=concurrency, **kw)
            done.update({r["seed"]: r for r in res["results"]})
        quality[task] = quality_row([done[s] for s in seeds if s in done])
    return {"quality": quality, "concurrency": ratio}


def bench_training(args: argparse.Namespace, work: Path) -> dict:
    """The main job: summarise `--training-db`, or play `train.py` on a fresh database."""
    if args.training_db:
        out = training_run.summarise(args.training_db)
        out["_db"] = args.training_db
        return out
    if not llama_available():
        return {"skipped": "llama_cpp not installed"}
    db = work / "training.sqlite"
    played = training_run.play(
        db, episodes=args.training_episodes, seed_offset=1000, log=work / "training.log"
    )
    return {**training_run.summarise(db), **played, "_db": str(db)}


def bench_hybrid(env_url: str, args: argparse.Namespace, memory: str | None) -> dict:
    """Evaluate a trained memory with the local model on a few unseen seeds per task."""
    if not llama_available():
        return {"skipped": "llama_cpp not installed"}
    db = args.hybrid_db or memory
    if not db:
        return {"skipped": "no training memory (training skipped or failed; pass --hybrid-db)"}
    if not Path(db).is_file():
        raise FileNotFoundError(f"training memory {db} does not exist")
    out: dict[str, Any] = {"seeds": args.hybrid_seeds}
    out["memory"] = f"given memory {db}" if args.hybrid_db else "the training section's memory"
    # The budget is shared out as the tasks come: what easy leaves unused goes to the later ones.
    end = time.monotonic() + args.hybrid_budget_min * 60
    out["quality"] = {}
    out["budget_min"] = args.hybrid_budget_min
    t0 = time.monotonic()
    for i, task in enumerate(TASKS):
        deadline = time.monotonic() + (end - time.monotonic()) / (len(TASKS) - i)
        res = evaluate(
            task=task, seeds=args.hybrid_seeds, model="local", db=db, env_url=env_url,
            deadline=deadline, progress=True,
        )  # fmt: skip
        out["quality"][task] = quality_row(res["results"])
        out["quality"][task]["alpha"] = _alpha(db, task)
    out["eval_s"] = round(time.monotonic() - t0, 1)
    return out


def _alpha(db: str, task: str) -> float | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("select alpha from alpha where task = ?", [task]).fetchone()
        return row[0] if row else None
    except sqlite3.OperationalError:
        return None
    finally:
        conn.close()


def calibration_run(env_url: str, episodes: int, work: Path) -> str:
    """A --model fake learning run on seeds 2000+ whose `steps` table feeds the calibration."""
    db = str(work / "calibration.sqlite")
    with (work / "calibration-train.log").open("w") as fh:
        for task in TASKS:
            opts = TrainOptions(
                env_url=env_url,
                task=task,
                episodes=episodes,
                model="fake",
                db=db,
                seed_offset=2000,
                log_dir=str(work / f"cal-runs-{task}"),
            )
            train(opts, out=fh)
    return db


def flag_calibration(dbs: list[str]) -> dict:
    """Rule FLAG proposals per confidence bin: mean confidence vs share truly in the ring."""
    samples: list[tuple[float, bool, str]] = []
    truth: dict[tuple[str, int], set[str]] = {}
    for db in dbs:
        if not Path(db).is_file():
            continue
        conn = sqlite3.connect(db)
        q = (
            "select e.task, e.seed, s.rule_action, s.rule_confidence from steps s "
            "join episodes e on e.thread_id = s.thread_id where s.rule_action like 'flag %'"
        )
        for task, seed, action, conf in conn.execute(q):
            key = (task, seed)
            if key not in truth:
                truth[key] = set(generate_network(task, seed).gang_ids)
            samples.append((conf, action.split()[1] in truth[key], task))
        conn.close()
    bins = []
    for lo, hi in zip(CAL_BINS, CAL_BINS[1:], strict=False):
        group = [s for s in samples if lo <= s[0] < hi]
        if not group:
            continue
        mean_conf = sum(s[0] for s in group) / len(group)
        share = sum(s[1] for s in group) / len(group)
        bins.append(
            {
                "bin": f"[{lo:.2f}, {min(hi, 1.0):.2f}{']' if hi > 1 else ')'}",
                "n": len(group),
                "mean_confidence": round(mean_conf, 3),
                "share_in_ring": round(share, 3),
                "gap": round(share - mean_conf, 3),
                "within_0_15": abs(share - mean_conf) <= 0.15,
                "by_task": {t: sum(s[2] == t for s in group) for t in TASKS},
            }
        )
    return {
        "flags": len(samples),
        "episodes": len(truth),
        "bins": bins,
        "all_within_0_15": all(b["within_0_15"] for b in bins) if bins else None,
    }


# ---------------------------------------------------------------------------------- table
def _fmt_quality(q: dict | None) -> str:
    if not q:
        return "n/a"
    if "error" in q:
        return f"error: {q['error']}"
    if not q.get("episodes"):
        return f"no episode played (skipped {q.get('skipped', 0)})"
    seeds = q["seeds"]
    text = (
        f"win {q['win_rate']:6.1%}  grader {q['mean_grader']:.3f}  steps {q['mean_steps']:5.1f}"
        f"  LLM calls/ep {q['llm_calls_per_episode']:5.1f}  (n={q['episodes']}, "
        f"seeds {min(seeds)}-{max(seeds)})"
    )
    modes = q.get("modes") or {}
    if q["llm_calls_per_episode"] and sum(modes.values()):
        total = sum(modes.values())
        text += "  modes " + "/".join(f"{modes[m] / total:.0%}" for m in modes) + " agree/rule/llm"
    if q.get("errors") or q.get("skipped"):
        text += f" errors {q.get('errors', 0)} skipped {q.get('skipped', 0)}"
    return text


def table(r: dict) -> str:
    rows: list[tuple[str, str]] = []

    def err(part: dict) -> bool:
        if "error" in part:
            rows.append(("  error", part["error"]))
            return True
        return False

    env = r.get("env", {})
    rows.append(("ENVIRONMENT (hard)", ""))
    if not err(env):
        rows += [
            ("  network generation, median", f"{env['generation_ms_median']:.0f} ms"),
            ("  steps/s in-process", f"{env['in_process_steps_per_s']}"),
            ("  steps/s HTTP (keep-alive, loopback)", f"{env['http_steps_per_s']}"),
            ("  steps/s WebSocket", f"{env['ws_steps_per_s']}"),
            (
                "  observation JSON at reset / last step",
                f"{env['hard_obs_bytes_reset'] / 1024:.1f} KiB / "
                f"{env['hard_obs_bytes_last'] / 1024:.1f} KiB",
            ),
        ]
    g = r.get("graph", {})
    rows.append((f"GRAPH (hard, --model fake, SQLite checkpointer, {g.get('episodes')} ep)", ""))
    if not err(g):
        rows += [
            (
                "  overhead per action (nodes + checkpoints)",
                f"{g['overhead_ms_per_action']:.1f} ms  ({g['actions_per_episode']:.0f} "
                f"actions/ep; {g['overhead_ms_per_budget_step']:.1f} ms per budget step; "
                f"env calls = {g['env_share_of_wall']:.0%} of wall)",
            ),
            (
                "  checkpoint bytes per hard episode",
                f"{g['checkpoint_bytes_per_episode'] / 1e6:.2f} MB  (database growth "
                f"{g['db_growth_bytes_per_episode'] / 1e6:.2f} MB incl. memory tables)",
            ),
        ]
    llm = r.get("llm", {})
    rows.append(("LOCAL MODEL LATENCY per decision (hard inspect-step prompts)", ""))
    if "skipped" in llm:
        rows.append(("  local model", f"skipped: {llm['skipped']}"))
    elif not err(llm):
        rows.append(
            (
                "  median, prefix reused",
                f"{llm['median_s_prefix_reused']:.2f} s  ({llm['decisions_prefix_reused']} "
                f"calls, {llm['reused_tokens_median']}/{llm['prompt_tokens_median']} prompt "
                f"tokens reused, {llm.get('new_tokens_median', '?')} evaluated)",
            )
        )
        if "median_s_cold" in llm:
            rows.append(
                (
                    "  median, cold prompt",
                    f"{llm['median_s_cold']:.2f} s  ({llm['decisions_cold']})",
                )
            )
    tr = r.get("training", {})
    rows.append(("TRAINING RUN (the main job: `make run` = python train.py, local model)", ""))
    if "skipped" in tr:
        rows.append(("  training", f"skipped: {tr['skipped']}"))
    elif tr and not err(tr):
        rows += training_run.table_rows(tr)
    pol = r.get("policies", {})
    rules = r.get("rules_agent", {})
    hyb = r.get("hybrid", {})
    rows.append(("DETECTION QUALITY per task", ""))
    for task in TASKS:
        for policy in ("random", "naive"):
            pq = pol if "error" in pol else pol.get(task, {}).get(policy)
            rows.append((f"  {task}: {policy}", _fmt_quality(pq)))
        rq = rules.get("quality", {}).get(task) if "error" not in rules else rules
        rows.append((f"  {task}: rules-only agent", _fmt_quality(rq)))
        if "skipped" in hyb:
            rows.append((f"  {task}: hybrid (local model)", f"skipped: {hyb['skipped']}"))
        else:
            hq = hyb.get("quality", {}).get(task) if "error" not in hyb else hyb
            rows.append((f"  {task}: hybrid (local model)", _fmt_quality(hq)))
    if "memory" in hyb:
        rows.append(("  hybrid memory", hyb["memory"]))
    if "quality" in hyb:
        alphas = ", ".join(f"{t} {q.get('alpha')}" for t, q in hyb["quality"].items())
        rows.append(
            (
                "  hybrid evaluation",
                f"α {alphas}; {hyb['eval_s']:.0f} s (budget {hyb['budget_min']:g} min, "
                "episodes not started within it are skipped)",
            )
        )
    c = rules.get("concurrency")
    rows.append(("CONCURRENCY (hard, --model fake, one server process)", ""))
    if c:
        rows.append(
            (
                f"  sequential / --concurrency {c['concurrency']}, {c['episodes']} episodes",
                f"{c['ratio']:.2f}x  ({c['sequential_s']:.0f} s / {c['concurrent_s']:.0f} s; "
                f"identical results: {'yes' if c['identical_results'] else 'NO'})",
            )
        )
    elif "error" in rules:
        rows.append(("  error", rules["error"]))
    cal = r.get("calibration", {})
    rows.append((f"RULE FLAG CALIBRATION ({cal.get('flags', 0)} flag proposals)", ""))
    if not err(cal):
        for b in cal["bins"]:
            rows.append(
                (
                    f"  confidence {b['bin']}",
                    f"n={b['n']:4d}  mean conf {b['mean_confidence']:.3f}  in ring "
                    f"{b['share_in_ring']:.3f}  gap {b['gap']:+.3f} "
                    f"{'ok' if b['within_0_15'] else 'OUT of ±0.15'}",
                )
            )
    width = max(len(k) for k, _ in rows)
    head = (
        f"fakegang bench — {r['date']} — `{r['command']}` — {r['machine']}"
        f"{' — QUICK (smoke settings)' if r['quick'] else ''}"
    )
    lines = [head, "-" * min(120, len(head))]
    lines += [f"{k:<{width}}  {v}".rstrip() for k, v in rows]
    lines.append(f"total {r['total_s']:.0f} s; sections: {r.get('section_s')}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- main
def bench_campaigns(quick: bool) -> dict:
    """Learning curves, static vs learning (bench/campaign_curves.py, --model fake policy), and
    the refit time with a full experience table."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("campaign_curves", BENCH / "campaign_curves.py")
    cc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cc)
    from fakegang.runs.campaign import summarise
    from fakegang.tools import experience
    from fakegang.tools.memory import Memory

    campaigns, rounds = ([0], 3) if quick else ([0, 1, 2, 3, 4], 10)
    settings = [("medium", "aged_accounts")]
    if not quick:
        settings += [("medium", "mixed"), ("hard", "mixed")]
    out: dict[str, Any] = {"campaigns": campaigns, "rounds": rounds}
    with tempfile.TemporaryDirectory() as tmp:
        for task, tactics in settings:
            results = [
                cc.campaign(task, tactics, c, rounds, mode, tmp)
                for c in campaigns
                for mode in ("static", "learning")
            ]
            s = summarise(
                results,
                task=task,
                tactics=tactics,
                campaigns=campaigns,
                rounds=rounds,
                model="fake",
            )
            out[f"{task}/{tactics}"] = {"auc": s["auc"], "since_switch": s["since_switch"]}
        memory = Memory(Path(tmp) / "refit.sqlite")
        ep = cc.Episode("hard", 5, tactics="aged_accounts")
        obs, starting = cc.play(ep, None)
        rows = experience.labelled_rows(obs, starting, set(obs.ring_ids), experience.load_weights())
        times = []
        for i in range(3 if quick else experience.MAX_EXPERIENCE_EPISODES):
            experience.store_experience(memory, "hard", f"t{i}", rows)
            t0 = time.perf_counter()
            experience.refit_task(memory, "hard", f"t{i}")
            times.append(time.perf_counter() - t0)
        memory.close()
    out["refit_s_full_table"] = round(times[-1], 3)
    out["refit_s_max"] = round(max(times), 3)
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="few seeds, for a fast smoke run")
    p.add_argument("--seeds", type=parse_seed_range, default=None, help="quality seeds (0-49)")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--ratio-episodes", type=int, default=None, help="hard episodes timed (40)")
    p.add_argument("--hybrid-db", default=None, help="evaluate this training memory (no training)")
    p.add_argument("--hybrid-seeds", type=parse_seed_range, default=None, help="default 0-2")
    p.add_argument("--training-db", default=None, help="summarise this run instead of training")
    p.add_argument("--training-episodes", type=int, default=50, help="train.py --episodes")
    p.add_argument("--skip-training", action="store_true")
    p.add_argument(
        "--hybrid-budget-min", type=float, default=12.0, help="hybrid evaluation wall budget"
    )
    p.add_argument("--skip-hybrid", action="store_true")
    p.add_argument("--skip-llm", action="store_true", help="skip the local-model latency")
    p.add_argument("--calibration-episodes", type=int, default=None, help="per task (10)")
    p.add_argument("--out-dir", default=str(BENCH / "results"))
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    args = p.parse_args(argv)
    q = args.quick
    args.seeds = args.seeds or (list(range(3)) if q else list(range(50)))
    args.ratio_episodes = args.ratio_episodes or (4 if q else 40)
    args.hybrid_seeds = args.hybrid_seeds or ([0] if q else [0, 1, 2])
    args.calibration_episodes = args.calibration_episodes or (1 if q else 10)
    if args.concurrency < 1 or args.ratio_episodes < 1 or args.training_episodes < 1:
        p.error("--concurrency, --ratio-episodes and --training-episodes must be at least 1")
    if q:
        args.concurrency = min(args.concurrency, 4)
        args.skip_training = args.skip_training or not args.training_db
        args.skip_hybrid = args.skip_hybrid or not (args.hybrid_db or args.training_db)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    command = "python bench/run_all.py " + " ".join(sys.argv[1:] if argv is None else argv)
    r: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command.strip(),
        "machine": f"{os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.1f} at start",
        "quick": args.quick,
        "seeds": args.seeds,
    }
    work = Path(tempfile.mkdtemp(prefix="fakegang-bench-"))
    server = None
    try:
        port = env_speed.free_port()
        server = env_speed.start_server(port)
        url = f"http://127.0.0.1:{port}"
        section("env", r, lambda: bench_env(1 if args.quick else 3, url, server.pid))
        section("graph", r, lambda: bench_graph(url, [0] if args.quick else [0, 1, 2], work))
        if args.skip_llm:
            r["llm"] = {"skipped": "--skip-llm"}
        else:
            section("llm", r, lambda: bench_llm(2 if args.quick else 10, 0 if args.quick else 3))
        section("policies", r, lambda: bench_policies(args.seeds))
        ratio_seeds = list(range(args.ratio_episodes))
        section(
            "rules_agent",
            r,
            lambda: bench_rules_agent(url, args.seeds, ratio_seeds, args.concurrency, work),
        )
        section("calibration_run", r, lambda: calibration_run(url, args.calibration_episodes, work))
        if args.skip_training:
            why = "--quick (pass --training-db)" if args.quick else "--skip-training"
            r["training"] = {"skipped": why}
        else:  # after the timed sections: the run must have the 2 cores to itself
            section("training", r, lambda: bench_training(args, work))
        if args.skip_hybrid:
            why = "--quick (pass --hybrid-db to include it)" if args.quick else "--skip-hybrid"
            r["hybrid"] = {"skipped": why}
        else:
            memory = r.get("training", {}).get("_db")
            section("hybrid", r, lambda: bench_hybrid(url, args, memory))
        dbs = [r["calibration_run"]] if isinstance(r.get("calibration_run"), str) else []
        dbs += r.get("graph", {}).get("_dbs", [])
        if r.get("training", {}).get("_db"):
            dbs.append(r["training"]["_db"])
        section("calibration", r, lambda: flag_calibration(dbs))
        section("campaigns", r, lambda: bench_campaigns(args.quick))
        if isinstance(r.get("calibration"), dict) and "error" not in r["calibration"]:
            r["calibration"]["sources"] = [
                "--model fake learning runs on seeds 2000+",
                "graph-overhead episodes",
            ] + (["the training run"] if r.get("training", {}).get("_db") else [])
    finally:
        if server is not None:
            server.terminate()
            with contextlib.suppress(Exception):
                server.wait(timeout=15)
        resources.reset_all()
        shutil.rmtree(work, ignore_errors=True)
    r["total_s"] = round(time.monotonic() - started, 1)
    for part in r.values():  # drop the temporary paths
        if isinstance(part, dict):
            part.pop("_dbs", None)
            part.pop("_db", None)
    r.pop("calibration_run", None)
    r["table"] = table(r)
    camp = r.get("campaigns") or {}
    if "error" not in camp and camp:
        lines = [
            f"  {k}: AUC static {v['auc'].get('static', 0):.2f} → learning "
            f"{v['auc'].get('learning', 0):.2f}"
            for k, v in camp.items()
            if isinstance(v, dict) and "auc" in v
        ]
        r["table"] += (
            f"\nCampaigns (bench/campaign_curves.py, {len(camp['campaigns'])} campaign(s) x "
            f"{camp['rounds']} rounds, --model fake policy):\n"
            + "\n".join(lines)
            + f"\n  refit with a full experience table: {camp['refit_s_full_table']:.2f} s"
        )
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = "-quick" if args.quick else ""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    text = json.dumps(r, indent=2)
    (out_dir / f"latest{suffix}.json").write_text(text)
    (out_dir / f"{stamp}{suffix}.json").write_text(text)
    print(json.dumps(r) if args.json else r["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
