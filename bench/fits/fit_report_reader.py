"""Fit the report reader: which starting account is the reported member.

    python bench/fits/fit_report_reader.py [--episodes 60] [--held-out 40]
                                           [--tasks easy medium hard]

The reader is tools/rules/report_reader.py.

Training data only: episode seeds SEED_BASE+i under every named generation and `mixed` (`mixed`
gets three times as many: its playbooks vary). Each episode's starting accounts are inspected and
labelled (the reported member or not). scikit-learn's `GradientBoostingClassifier` (depth 3, 100
trees) is fitted per task, and its trees are written to tools/rules/report_reader.json with the
share of held-out reports (seeds HELD_OUT_BASE+i, never fitted on) whose member it ranks first,
per tactics.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from fakegang.tools.rules import report_reader  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.schema import PlainObservation  # noqa: E402
from fakegang_env.tactics import MIXED, TACTICS_NAMES  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tools" / "rules" / "report_reader.json"
SEED_BASE = 300_000
HELD_OUT_BASE = 310_000
TREES, DEPTH = 100, 3


def read_report(task: str, seed: int, tactics: str) -> tuple[Episode, PlainObservation, list[str]]:
    """An episode with every starting account inspected: the episode, its observation then and
    the starting accounts."""
    ep = Episode(task, seed, tactics=tactics)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    for a in starting:
        obs = PlainObservation(**ep.step("inspect", a, None))
    return ep, obs, starting


def report(job: tuple[str, int, str]) -> tuple[str, list[list[float]], list[int]]:
    """One episode's report read: its tactics, the starting accounts' rows and labels."""
    task, seed, tactics = job
    ep, obs, starting = read_report(task, seed, tactics)
    profiles = {p.account_id: p for p in obs.visible_accounts}
    labels = [int(a == ep.network.reported_id) for a in starting]
    return tactics, report_reader.report_rows(profiles, starting), labels


def jobs(task: str, base: int, episodes: int) -> list[tuple[str, int, str]]:
    return [
        (task, base + i, t)
        for t in TACTICS_NAMES
        for i in range(episodes * (3 if t == MIXED else 1))
    ]


def export(model) -> report_reader.Trees:
    """A fitted binary `GradientBoostingClassifier` as the reader's JSON-ready trees."""
    trees = []
    for (estimator,) in model.estimators_:
        t = estimator.tree_
        trees.append(
            (
                tuple(int(v) for v in t.children_left),
                tuple(int(v) for v in t.children_right),
                tuple(int(v) for v in t.feature),
                tuple(float(v) for v in t.threshold),
                tuple(float(v) for v in t.value[:, 0, 0]),
            )
        )
    probe = np.zeros((1, len(report_reader.FEATURES)))
    rate = float(model.learning_rate)
    leaves = sum(rate * float(e.predict(probe)[0]) for (e,) in model.estimators_)
    init = float(model.decision_function(probe)[0]) - leaves
    return report_reader.Trees(init, rate, tuple(trees))


def top1(trees: report_reader.Trees, reports: list) -> dict[str, float]:
    """Per tactics, the share of `reports` whose member the trees rank first."""
    hits: dict[str, list[int]] = {}
    for tactics, rows, labels in reports:
        scores = [trees.score(r) for r in rows]
        hits.setdefault(tactics, []).append(labels[scores.index(max(scores))])
    return {t: round(sum(h) / len(h), 3) for t, h in hits.items()}


def fit_task(task: str, episodes: int, held_out: int, pool: ProcessPoolExecutor) -> dict:
    from sklearn.ensemble import GradientBoostingClassifier

    train = list(pool.map(report, jobs(task, SEED_BASE, episodes), chunksize=8))
    x = np.array([r for _, rows, _ in train for r in rows])
    y = np.array([v for _, _, labels in train for v in labels])
    model = GradientBoostingClassifier(n_estimators=TREES, max_depth=DEPTH, random_state=0)
    model.fit(x, y)
    trees = export(model)
    held = list(pool.map(report, jobs(task, HELD_OUT_BASE, held_out), chunksize=8))
    return {"model": trees.to_dict(), "reports": len(train), "held_out_top1": top1(trees, held)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=60, help="training reports per tactics")
    p.add_argument("--held-out", type=int, default=40, help="held-out reports per tactics")
    p.add_argument("--tasks", nargs="+", default=["easy", "medium", "hard"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", type=Path, default=OUT)
    a = p.parse_args(argv)
    with ProcessPoolExecutor(a.workers) as pool:
        tasks = {t: fit_task(t, a.episodes, a.held_out, pool) for t in a.tasks}
    for t, fitted in tasks.items():
        print(t, "held-out top-1:", json.dumps(fitted["held_out_top1"]))
    script = "bench/fits/fit_report_reader.py"
    note = f"fitted by {script} --episodes {a.episodes} --held-out {a.held_out}"
    a.out.write_text(json.dumps({"note": note, "tasks": tasks}, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
