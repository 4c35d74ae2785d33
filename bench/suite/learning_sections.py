"""`make bench` learning sections: the rule engine's flag calibration, the generations' table
and the campaign learning curves with the refit time.

Split from run_all.py, which keeps the orchestration and the CLI (and puts the checkout on
sys.path, so `bench.*` imports).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.experiments import tactics_calibration
from fakegang.graph.context import Context
from fakegang.runs.runner import TrainOptions, train
from fakegang_env.generator import generate_network
from fakegang_env.tasks import TASK_NAMES as TASKS

CAL_BINS = [0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001]


def calibration_run(env_url: str, episodes: int, work: Path) -> str:
    """A --model fake learning run on seeds 2000+ whose `steps` table feeds the calibration."""
    db = str(work / "calibration.sqlite")
    with (work / "calibration-train.log").open("w") as fh:
        for task in TASKS:
            opts = TrainOptions(
                context=Context(model="fake", db_path=db),
                env_url=env_url,
                task=task,
                episodes=episodes,
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


def bench_tactics(args: argparse.Namespace) -> dict:
    """The generations' calibration table; --quick: hard, classic and mixed, 3 seeds."""
    if args.quick:
        return tactics_calibration.run(
            ["hard"], ["classic", "mixed"], [0, 1, 2], [1000, 1001], workers=2
        )
    return tactics_calibration.run(
        ["hard", "medium"],
        list(tactics_calibration.TACTICS_NAMES),
        list(args.seeds),
        list(range(1000, 1020)),
        workers=2,
    )


def bench_campaigns(quick: bool) -> dict:
    """Learning curves, static vs learning (bench/experiments/campaign_curves.py, --model fake
    policy), and the refit time with a full experience table."""
    from bench.experiments import campaign_curves as cc
    from fakegang.runs.campaign import summarise
    from fakegang.tools.learning import experience
    from fakegang.tools.memory.store import Memory

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
