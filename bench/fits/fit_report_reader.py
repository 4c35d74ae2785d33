"""Fit the report reader: which starting account is the reported member.

    python bench/fits/fit_report_reader.py [--episodes 60] [--held-out 40]
                                           [--tasks easy medium hard] [--adaptive hard]

The reader is tools/rules/report_reader.py.

Training data only: episode seeds SEED_BASE+i under every named generation and `mixed` (`mixed`
gets three times as many: its playbooks vary). Each episode's starting accounts are inspected and
labelled (the reported member or not). scikit-learn's `GradientBoostingClassifier` is fitted per
task, and its trees are written to tools/rules/report_reader.json with the share of held-out
reports (seeds HELD_OUT_BASE+i, never fitted on) whose member it ranks first, per tactics; the
tasks not asked for keep their entries.

For the tasks in `--adaptive`, the reader also learns the playbooks an adaptive operator reaches:
those were chosen to survive the reader, and a random draw of budget-spending playbooks is not
like them (docs/design-decisions.md, "A report reader that has met the operator"). A first reader
is fitted on the named reports; the prior and the learning agent (bench/experiments/
campaign_curves.py) play training campaigns ADAPTIVE_CAMPAIGNS with it, and every round's report
is added to the data of the reader shipped. Held-out top-1 on `adaptive` comes from campaigns
HELD_OUT_CAMPAIGNS, played the same way (against the first reader, so the figure is the shipped
reader's on the kind of playbooks it was fitted on).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments import campaign_curves  # noqa: E402
from fakegang.tools.rules import report_reader  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.schema import PlainObservation  # noqa: E402
from fakegang_env.tactics import ADAPTIVE, MIXED, TACTICS_NAMES, Playbook  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tools" / "rules" / "report_reader.json"
SEED_BASE = 300_000
HELD_OUT_BASE = 310_000
TREES, DEPTH = 100, 3
#: The reader of `--adaptive` tasks has more to tell apart: deeper and more trees.
ADAPTIVE_TREES, ADAPTIVE_DEPTH = 200, 4
#: Training campaigns of the adaptive operator (10 rounds each, against prior and learning).
ADAPTIVE_CAMPAIGNS = range(400, 560)
#: Campaigns the adaptive top-1 is reported on (neither fitted nor tuned on).
HELD_OUT_CAMPAIGNS = range(600, 624)
ADAPTIVE_ROUNDS = 10


def read_report(
    task: str, seed: int, tactics: str | Playbook
) -> tuple[Episode, PlainObservation, list[str]]:
    """An episode with every starting account inspected: the episode, its observation then and
    the starting accounts."""
    ep = Episode(task, seed, tactics=tactics)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    for a in starting:
        obs = PlainObservation(**ep.step("inspect", a, None))
    return ep, obs, starting


Report = tuple[str, list[list[float]], list[int]]


def report(job: tuple[str, int, str]) -> Report:
    """One episode's report read: its tactics, the starting accounts' rows and labels."""
    task, seed, tactics = job
    return _read(task, seed, tactics, tactics)


def _read(task: str, seed: int, tactics: str | Playbook, name: str) -> Report:
    ep, obs, starting = read_report(task, seed, tactics)
    profiles = {p.account_id: p for p in obs.visible_accounts}
    labels = [int(a == ep.network.reported_id) for a in starting]
    return name, report_reader.report_rows(profiles, starting), labels


@contextmanager
def reading_with(task: str, trees: Mapping) -> Iterator[None]:
    """While it is open, the agents read `task`'s reports with `trees` (a `Trees.to_dict()`)
    instead of the shipped reader."""
    shipped = report_reader.load
    fitted = report_reader.Trees.from_dict(trees)
    report_reader.load = lambda t: fitted if t == task else shipped(t)  # type: ignore[assignment]
    try:
        yield
    finally:
        report_reader.load = shipped


def adaptive_reports(job: tuple[str, int, str, Mapping]) -> list[Report]:
    """The report of every round of adaptive campaign `c`, played by `mode` (prior or learning)
    reading with `trees`: the operator's playbooks are those it reaches against that agent."""
    task, c, mode, trees = job
    reports: list[Report] = []

    def player(ep: Episode, weights: dict | None, yields: Mapping[str, float] | None = None):
        reports.append(_read(task, ep.seed, ep.playbook, ADAPTIVE))  # a twin: same network
        return campaign_curves.play(ep, weights, yields)

    with reading_with(task, trees), tempfile.TemporaryDirectory() as db_dir:
        campaign_curves.campaign(task, ADAPTIVE, c, ADAPTIVE_ROUNDS, mode, db_dir, player=player)
    return reports


def campaign_reports(
    task: str, campaigns: range, trees: Mapping, pool: ProcessPoolExecutor
) -> list[Report]:
    """The reports of `campaigns`' rounds against the prior and the learning agent."""
    jobs = [(task, c, mode, trees) for c in campaigns for mode in ("prior", "learning")]
    return [r for rounds in pool.map(adaptive_reports, jobs) for r in rounds]


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


def fit(reports: list[Report], n_trees: int, depth: int) -> report_reader.Trees:
    from sklearn.ensemble import GradientBoostingClassifier

    x = np.array([r for _, rows, _ in reports for r in rows])
    y = np.array([v for _, _, labels in reports for v in labels])
    model = GradientBoostingClassifier(n_estimators=n_trees, max_depth=depth, random_state=0)
    return export(model.fit(x, y))


def fit_task(
    task: str, episodes: int, held_out: int, adaptive: bool, pool: ProcessPoolExecutor
) -> dict:
    train = list(pool.map(report, jobs(task, SEED_BASE, episodes), chunksize=8))
    held = list(pool.map(report, jobs(task, HELD_OUT_BASE, held_out), chunksize=8))
    trees = fit(train, TREES, DEPTH)
    if adaptive:
        first = trees.to_dict()
        train += campaign_reports(task, ADAPTIVE_CAMPAIGNS, first, pool)
        held += campaign_reports(task, HELD_OUT_CAMPAIGNS, first, pool)
        trees = fit(train, ADAPTIVE_TREES, ADAPTIVE_DEPTH)
        before = top1(report_reader.Trees.from_dict(first), held)
        print(task, "held-out top-1 of the first reader:", json.dumps(before), flush=True)
    return {"model": trees.to_dict(), "reports": len(train), "held_out_top1": top1(trees, held)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=60, help="training reports per tactics")
    p.add_argument("--held-out", type=int, default=40, help="held-out reports per tactics")
    p.add_argument("--tasks", nargs="+", default=["easy", "medium", "hard"])
    p.add_argument(
        "--adaptive", nargs="*", default=["hard"], help="tasks whose reader meets the operator"
    )
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", type=Path, default=OUT)
    a = p.parse_args(argv)
    with ProcessPoolExecutor(a.workers) as pool:
        fitted = {t: fit_task(t, a.episodes, a.held_out, t in a.adaptive, pool) for t in a.tasks}
    command = "python bench/fits/fit_report_reader.py " + " ".join(argv or sys.argv[1:])
    for t, entry in fitted.items():
        entry["command"] = command
        print(t, "held-out top-1:", json.dumps(entry["held_out_top1"]))
    tasks = json.loads(a.out.read_text())["tasks"] if a.out.exists() else {}
    tasks.update(fitted)
    a.out.write_text(json.dumps({"tasks": tasks}, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
