"""`make bench`: one table of the environment's speed, the agent's overhead and its quality.

    python bench/suite/run_all.py [--quick] [--hybrid-db PATH] [--skip-hybrid] [--json]

Sections (each fails on its own: an error is shown in its row, the others still run):
* resources: a second, fresh server process measured from /proc while it serves episodes of
  every task and 8 hard `/ws` sessions at once (bench/speed/env_resources.py): the source of
  `fakegang_env/openenv.yaml`'s `validation.resources`;
* env: hard network generation, steps/s in-process / HTTP / WebSocket, hard observation size
  (bench/speed/env_speed.py's functions, against the one server process the bench starts);
* graph: a hard episode through the graph with `--model fake` on a fresh SQLite memory (the
  training path: SQLite checkpointer, durability sync, memory writes); overhead per action =
  (episode wall time - time inside environment HTTP calls - LLM time) / actions, and the
  checkpoint bytes the episode added (checkpoint + writes blobs) and the database growth;
* llm: local-model decision latency, median, with the KV-cache prefix reused and cold
  (bench/speed/llm_latency.py's agent prompts); "skipped" when llama_cpp is not installed;
* quality per task on seeds 0-49: `random` and `naive` (fakegang_env.policies.run_policy,
  in-process), the rules-only agent (the graph with `--model fake` on a fresh memory, so α stays
  at its floor and the rules decide) and the hybrid agent with the local model after training;
* training (the main job): `train.py` — the program `make run` runs, 50-episode curriculum with
  the local model — played in a subprocess on a fresh database with `--seed-offset 1000` (so the
  hybrid evaluation seeds 0-2 are unseen), timed, and summarised by
  bench/experiments/training_run.py: LLM calls per task, agree / rule_override / llm shares,
  decision latency with and without the KV-cache prefix reused; its hard phase (rounds of the
  adaptive campaign 1000) beside `prior`, the same agent frozen, on the same campaign and rounds;
* load: 64 hard episodes at once over HTTP against the one server process (bench/speed/env_load.py):
  requests/s, latency p50/p99, errors (must be 0; a final reward that differs from the same
  actions played in-process counts as one);
* scale: 40 hard `--model fake` episodes as fresh `fakegang eval` processes, sequential /
  `--concurrency 2` (worker processes) / `--backend ray --concurrency 2` (a local Ray instance,
  start-up included), three interleaved rounds (one with --quick): median wall times, speed-ups
  against the 1.7x / 1.5x targets, identical results (bench/speed/scale_out.py);
* tactics: bench/experiments/tactics_calibration.py, per task (hard, medium) and generation on
  seeds 0-49: the shipped-weights agent, naive and oracle, classic-fitted vs refit classifier F1
  (refit on seeds 1000-1019); and bench/speed/tactics_speed.py, hard generation time per playbook;
* adaptive: bench/experiments/adaptive_calibration.py on campaigns 300-319 (hard, medium): the
  frozen `prior` detector, a random investigator and the oracle against the adaptive operator, the
  pivoting perfect classifier on every playbook it reached, and the CPU time of a round and a move;
* learner: bench/speed/learner_speed.py, the learner of the current operator on a hard adaptive
  campaign: a refit after a debrief, a step scored with its trees and with the logistic weights;
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
evaluation. `--skip-training` (and `--quick`) skip the training run (about 4 minutes).

Writes bench/results/latest.json (`--quick`: latest-quick.json) and nothing beside it: git
keeps the history of latest.json, so dated copies would only go stale in the tree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))  # the checkout: bench.* imports

from bench.experiments import adaptive_calibration  # noqa: E402
from bench.speed import env_load, env_resources, env_speed, scale_out, tactics_speed  # noqa: E402
from bench.speed.agent_bench import bench_graph, bench_llm  # noqa: E402
from bench.suite.bench_table import table  # noqa: E402
from bench.suite.learning_sections import (  # noqa: E402
    bench_campaigns,
    bench_tactics,
    calibration_run,
    flag_calibration,
)
from bench.suite.quality_sections import (  # noqa: E402
    bench_hybrid,
    bench_policies,
    bench_rules_agent,
    bench_training,
)
from fakegang.cli.train import parse_seed_range  # noqa: E402
from fakegang.graph import resources  # noqa: E402


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


# ---------------------------------------------------------------------------------- sections
def bench_adaptive(quick: bool) -> dict:
    """The adaptive operator's calibration (bench/experiments/adaptive_calibration.py) on
    campaigns 300+, never used to tune it; --quick: hard, 2 campaigns of 4 rounds."""
    if quick:
        return {"tasks": [adaptive_calibration.calibrate("hard", [300, 301], 4, 2)]}
    campaigns = list(adaptive_calibration.REPORTED_CAMPAIGNS)
    return {
        "tasks": [adaptive_calibration.calibrate(t, campaigns, 10, 2) for t in ("hard", "medium")]
    }


def bench_env(n_seeds: int, url: str, server_pid: int) -> dict:
    """bench/speed/env_speed.py's measurements, against the bench's own server process."""
    generation = env_speed.bench_generation(list(range(max(5, n_seeds))))
    episodes = {seed: env_speed.record_actions(seed) for seed in range(n_seeds)}
    in_process = env_speed.bench_in_process(episodes)
    pivot = env_speed.bench_pivots(list(range(max(5, n_seeds))))
    http = env_speed.bench_http(url, episodes, server_pid)
    ws = env_speed.bench_ws(url, episodes)
    return {
        "episodes": n_seeds,
        "generation_ms_median": round(generation["median_s"] * 1000, 1),
        "generation_ms_max": round(generation["max_s"] * 1000, 1),
        "in_process_steps_per_s": round(in_process["steps_per_s"]),
        "pivot_ms_median": round(pivot["median_s"] * 1000, 3),
        "pivot_ms_max": round(pivot["max_s"] * 1000, 2),
        "http_steps_per_s": round(http["steps_per_s"]),
        "ws_steps_per_s": round(ws["steps_per_s"]),
        "hard_obs_bytes_reset": http["reset_bytes"],
        "hard_obs_bytes_last": http["final_bytes"],
    }


# ---------------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="few seeds, for a fast smoke run")
    p.add_argument("--seeds", type=parse_seed_range, default=None, help="quality seeds (0-49)")
    p.add_argument("--concurrency", type=int, default=2, help="worker processes (2)")
    p.add_argument("--load-episodes", type=int, default=None, help="concurrent HTTP episodes (64)")
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
    args.load_episodes = args.load_episodes or (8 if q else 64)
    args.hybrid_seeds = args.hybrid_seeds or ([0] if q else [0, 1, 2])
    args.calibration_episodes = args.calibration_episodes or (1 if q else 10)
    if min(args.concurrency, args.ratio_episodes, args.training_episodes, args.load_episodes) < 1:
        p.error(
            "--concurrency, --ratio-episodes, --training-episodes and --load-episodes must be "
            "at least 1"
        )
    if q:
        args.skip_training = args.skip_training or not args.training_db
        args.skip_hybrid = args.skip_hybrid or not (args.hybrid_db or args.training_db)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    command = "python bench/suite/run_all.py " + " ".join(sys.argv[1:] if argv is None else argv)
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
        section("resources", r, lambda: env_resources.run(1 if args.quick else 3, 8))
        section("load", r, lambda: env_load.bench_load(url, args.load_episodes))
        section("graph", r, lambda: bench_graph(url, [0] if args.quick else [0, 1, 2], work))
        if args.skip_llm:
            r["llm"] = {"skipped": "--skip-llm"}
        else:
            section("llm", r, lambda: bench_llm(2 if args.quick else 10, 0 if args.quick else 3))
        section("policies", r, lambda: bench_policies(args.seeds))
        section(
            "tactics_speed", r, lambda: tactics_speed.bench(list(range(3 if args.quick else 10)))
        )
        section("tactics", r, lambda: bench_tactics(args))
        section(
            "rules_agent", r, lambda: bench_rules_agent(url, args.seeds, args.concurrency, work)
        )
        section(
            "scale",
            r,
            lambda: scale_out.bench_scale(
                args.ratio_episodes, args.concurrency, work / "scale", 1 if args.quick else None
            ),
        )
        section("calibration_run", r, lambda: calibration_run(url, args.calibration_episodes, work))
        if args.skip_training:
            why = "--quick (pass --training-db)" if args.quick else "--skip-training"
            r["training"] = {"skipped": why}
        else:  # after the timed sections: the run must have the 2 cores to itself
            section("training", r, lambda: bench_training(args, work))
        if args.quick or args.skip_training or args.training_db:
            # two more trainings with the local model: only in a full run that trains itself
            r["busy_cpu"] = {"skipped": "only when make bench trains (no --quick/--training-db)"}
        else:
            from bench.speed import busy_cpu  # quiet, then one core kept busy

            n = args.training_episodes
            section("busy_cpu", r, lambda: busy_cpu.bench(work / "busy", episodes=n))
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
        section("adaptive", r, lambda: bench_adaptive(args.quick))
        from bench.speed import learner_speed  # the learner's refit and step cost

        section("learner", r, lambda: learner_speed.bench(0, 4 if args.quick else 10))
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
            "\nCampaigns (bench/experiments/campaign_curves.py, "
            f"{len(camp['campaigns'])} campaign(s) x "
            f"{camp['rounds']} rounds, --model fake policy):\n"
            + "\n".join(lines)
            + f"\n  refit with a full experience table: {camp['refit_s_full_table']:.2f} s"
        )
    if isinstance(r.get("learner"), dict) and "error" not in r["learner"]:
        from bench.speed import learner_speed

        r["table"] += "\n\n" + learner_speed.table(r["learner"])
    from bench.speed import view_speed  # `fakegang view` on a 240-action episode

    if args.quick:  # a 240-action episode is played first: about a minute
        r["view"] = {"skipped": "--quick (run bench/speed/view_speed.py)"}
    else:
        section("view", r, lambda: view_speed.run(5))
        r["table"] += "\n\n" + r["view"].get("table", f"view: {r['view'].get('error')}")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = "-quick" if args.quick else ""
    text = json.dumps(r, indent=2)
    (out_dir / f"latest{suffix}.json").write_text(text)
    print(json.dumps(r) if args.json else r["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
