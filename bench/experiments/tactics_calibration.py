"""Calibration of the generations: does a shift hurt, and is the evidence still there?

Per task (hard, medium) and per tactics (classic, each named generation, mixed), on test seeds
0-49:
  * agent: the rule engine with its shipped weights, learning off, played in-process
    (tools/rules/player.py; `fakegang eval --model fake` plays the same decisions, pinned by
    tests/agent/test_agent_tactics.py): win rate and mean grader;
  * naive / oracle: the built-in reference policies (fakegang_env.policies.run_policy);
  * classifier F1: the rule engine's profile model (the logistic features of
    bench/fits/fit_rule_weights.py) on the inspected accounts the agent sees, every 2nd action of
    its episodes, threshold 0.5, pooled over seeds. `classic-fitted` = the shipped weights on the
    shipped agent's episodes; `refit` = weights fitted (two rounds, as fit_rule_weights.py does)
    on the generation's own training seeds 1000+, scored on the episodes the agent plays with
    them. The refit agent's win rate is printed too: what learning could recover.

  * pivot yields: per trace, how many other members and how many innocents share a member's
    value of it (what a pivot from that member finds; its page shows at most 25 of them),
    averaged over every member of every test seed's fresh network, and how often it is empty.
    `--yields-only` prints just this table (seconds, no play).

Targets (the campaigns design): agent win rate loses >= 25 points against classic on hard
(>= 20 on medium), averaged over the named generations, and on mixed; refit F1 >= 0.9; oracle
wins 100 % with mean grader >= 0.95.

Usage: python bench/experiments/tactics_calibration.py [--tasks hard,medium] [--seeds 0-49]
       [--train-seeds 1000-1019] [--tactics a,b] [--workers 2] [--yields-only] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from fakegang.tools.rules import engine as rules
from fakegang.tools.rules import evidence
from fakegang.tools.rules.evidence import CaseView, profile_features
from fakegang.tools.rules.player import play_rules
from fakegang_env.arguments import seed_range
from fakegang_env.generator import generate_network
from fakegang_env.policies import run_policy
from fakegang_env.tactics import MIXED, TACTICS_NAMES
from fakegang_env.traces import TRACES

LOSS_TARGET = {"hard": 0.25, "medium": 0.20}
REFIT_F1_TARGET = 0.9
ORACLE_GRADER_TARGET = 0.95
SAMPLE_EVERY = 2
Rows = list[tuple[dict[str, float], int]]


@contextlib.contextmanager
def rule_weights(profile: dict[str, float] | None) -> Iterator[None]:
    """Play the rule engine with another profile model (frontier model and flag calibration
    stay shipped). Swaps `rules.load_weights` for the duration: the bench's stand-in for the
    learning helper's weight refit, so the shipped file is never touched."""
    if profile is None:
        yield
        return
    shipped = rules.load_weights
    weights = {**shipped(), "profile": profile}
    rules.load_weights = lambda: weights  # type: ignore[assignment]
    try:
        yield
    finally:
        rules.load_weights = shipped


def play(task: str, seeds: list[int], tactics: str, *, early_submit: bool) -> tuple[Rows, list]:
    """Play the rule engine (current weights) on `seeds`; profile rows and episode results."""
    rows: Rows = []

    def hook(episode, obs, starting, proposal) -> None:
        if obs.action_count % SAMPLE_EVERY:
            return
        gang = set(episode.network.gang_ids)
        view = CaseView.build(obs, starting)
        for a in view.profiles:
            rows.append((profile_features(view, a), int(a in gang)))

    results = []
    for seed in seeds:
        evidence._PAIR_VOTES.clear()  # each generation starts equally cold
        results.append(play_rules(task, seed, hook, early_submit=early_submit, tactics=tactics))
    return rows, results


def refit(rows: Rows) -> dict[str, float]:
    from sklearn.linear_model import LogisticRegression

    names = sorted(rows[0][0])
    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit([[f[n] for n in names] for f, _ in rows], [y for _, y in rows])
    weights = {n: round(float(w), 4) for n, w in zip(names, model.coef_[0], strict=True)}
    weights["bias"] = round(float(model.intercept_[0]), 4)
    return weights


def f1(rows: Rows, weights: dict[str, float]) -> float:
    tp = fp = fn = 0
    for feats, label in rows:
        hit = rules.logistic(weights, feats) >= 0.5
        tp += hit and label
        fp += hit and not label
        fn += (not hit) and label
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def rates(results: list[dict]) -> dict[str, float]:
    n = len(results)
    return {
        "win_rate": round(sum(bool(r["won"]) for r in results) / n, 4),
        "mean_grader": round(sum(r["grader_score"] or 0.0 for r in results) / n, 4),
    }


def pivot_yields(task: str, tactics: str, seeds: list[int]) -> dict[str, dict[str, float]]:
    """Per trace: mean other members and innocents sharing a member's value, share empty."""
    sums = {t: [0, 0, 0] for t in TRACES}  # members, innocents, empty
    n = 0
    for seed in seeds:
        net = generate_network(task, seed, tactics)
        assert net.traces is not None
        ring = set(net.gang_ids)
        for member in net.gang_ids:
            n += 1
            for trace in TRACES:
                hits = net.traces.matches(net, trace, member)
                inside = sum(a in ring for a in hits)
                sums[trace][0] += inside
                sums[trace][1] += len(hits) - inside
                sums[trace][2] += not hits
    return {
        t: {
            "members": round(m / n, 2),
            "innocents": round(i / n, 2),
            "empty": round(e / n, 3),
        }
        for t, (m, i, e) in sums.items()
    }


def calibrate(task: str, tactics: str, seeds: list[int], train: list[int]) -> dict[str, Any]:
    """One row of the table: every measure for (task, tactics)."""
    started = time.monotonic()
    shipped = rules.load_weights()["profile"]
    train_rows, _ = play(task, train, tactics, early_submit=False)
    first = refit(train_rows)
    with rule_weights(first):
        more, _ = play(task, train, tactics, early_submit=False)
    fitted = refit(train_rows + more)
    test_rows, agent = play(task, seeds, tactics, early_submit=True)
    with rule_weights(fitted):
        refit_rows, refit_agent = play(task, seeds, tactics, early_submit=True)
    policies = {p: [run_policy(p, task, s, tactics) for s in seeds] for p in ("naive", "oracle")}
    return {
        "task": task,
        "tactics": tactics,
        "agent": rates(agent),
        "naive": rates(policies["naive"]),
        "oracle": rates(policies["oracle"]),
        "refit_agent": rates(refit_agent),
        "f1_classic_fitted": round(f1(test_rows, shipped), 4),
        "f1_refit": round(f1(refit_rows, fitted), 4),
        "rows": {"train": len(train_rows) + len(more), "test": len(test_rows)},
        "pivot_yields": pivot_yields(task, tactics, seeds),
        "seconds": round(time.monotonic() - started, 1),
    }


def _calibrate(job: tuple[str, str, list[int], list[int]]) -> dict[str, Any]:
    return calibrate(*job)


def run(
    tasks: list[str],
    tactics: list[str],
    seeds: list[int],
    train: list[int],
    workers: int = 2,
) -> dict[str, Any]:
    """Every (task, tactics) row, plus the per-task verdicts against the targets."""
    jobs = [(t, g, seeds, train) for t in tasks for g in tactics]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            rows = list(pool.map(_calibrate, jobs))
    else:
        rows = [_calibrate(j) for j in jobs]
    return {
        "seeds": f"{seeds[0]}-{seeds[-1]}",
        "train_seeds": f"{train[0]}-{train[-1]}",
        "rows": rows,
        "verdicts": {t: verdict(t, [r for r in rows if r["task"] == t]) for t in tasks},
    }


def verdict(task: str, rows: list[dict]) -> dict[str, Any]:
    """The targets for one task, measured (only on what was run)."""
    by = {r["tactics"]: r for r in rows}
    if "classic" not in by:
        return {"note": "classic not run: no loss measured"}
    base = by["classic"]["agent"]["win_rate"]
    named = [r for r in rows if r["tactics"] not in ("classic", MIXED)]
    out: dict[str, Any] = {"classic_agent_win": base}
    if named:
        mean = sum(r["agent"]["win_rate"] for r in named) / len(named)
        out["named_mean_loss"] = round(base - mean, 4)
        out["named_loss_ok"] = base - mean >= LOSS_TARGET.get(task, 0.25)
    if MIXED in by:
        out["mixed_loss"] = round(base - by[MIXED]["agent"]["win_rate"], 4)
        out["mixed_loss_ok"] = out["mixed_loss"] >= LOSS_TARGET.get(task, 0.25)
    out["refit_f1_ok"] = all(r["f1_refit"] >= REFIT_F1_TARGET for r in rows)
    out["oracle_ok"] = all(
        r["oracle"]["win_rate"] == 1.0 and r["oracle"]["mean_grader"] >= ORACLE_GRADER_TARGET
        for r in rows
    )
    return out


def table(result: dict[str, Any]) -> str:
    head = (
        f"{'task':<7}{'tactics':<21}{'agent win':>10}{'grader':>8}{'naive':>7}{'oracle':>8}"
        f"{'grader':>8}{'F1 classic':>11}{'F1 refit':>9}{'refit win':>10}"
    )
    lines = [
        f"tactics calibration: test seeds {result['seeds']}, refit on {result['train_seeds']}",
        head,
        "-" * len(head),
    ]
    for r in result["rows"]:
        lines.append(
            f"{r['task']:<7}{r['tactics']:<21}{r['agent']['win_rate']:>10.0%}"
            f"{r['agent']['mean_grader']:>8.3f}{r['naive']['win_rate']:>7.0%}"
            f"{r['oracle']['win_rate']:>8.0%}{r['oracle']['mean_grader']:>8.3f}"
            f"{r['f1_classic_fitted']:>11.3f}{r['f1_refit']:>9.3f}"
            f"{r['refit_agent']['win_rate']:>10.0%}"
        )
    for task, v in result["verdicts"].items():
        lines.append(f"{task}: {json.dumps(v)}")
    if any("pivot_yields" in r for r in result["rows"]):  # results recorded before pivots lack it
        lines.append(yields_table(result))
    return "\n".join(lines)


def yields_table(result: dict[str, Any]) -> str:
    """Per (task, tactics) and trace: other members / innocents a member's pivot finds."""
    head = f"{'task':<7}{'tactics':<21}" + "".join(f"{t:>14}" for t in TRACES)
    lines = [
        f"pivot yields from a member, test seeds {result['seeds']}: other members / innocents "
        "sharing its value (mean over members; * = empty for some member)",
        head,
        "-" * len(head),
    ]
    for r in result["rows"]:
        if "pivot_yields" not in r:
            continue
        cells = []
        for t in TRACES:
            y = r["pivot_yields"][t]
            mark = "*" if y["empty"] else " "
            cells.append(f"{y['members']:>6.1f} /{y['innocents']:>5.1f}{mark}")
        lines.append(f"{r['task']:<7}{r['tactics']:<21}" + "".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="hard,medium")
    p.add_argument("--tactics", default=",".join(TACTICS_NAMES))
    p.add_argument("--seeds", type=seed_range, default=range(50))
    p.add_argument("--train-seeds", type=seed_range, default=range(1000, 1020))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument(
        "--yields-only", action="store_true", help="only the pivot yields table (no play)"
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    tactics = args.tactics.split(",")
    bad = [t for t in tactics if t not in TACTICS_NAMES]
    if bad:
        p.error(f"unknown tactics {bad}; valid: {', '.join(TACTICS_NAMES)}")
    if min(args.train_seeds) < 1000 or set(args.train_seeds) & set(args.seeds):
        p.error("--train-seeds must be >= 1000 and disjoint from --seeds (fit on training seeds)")
    if args.yields_only:
        seeds = list(args.seeds)
        rows = [
            {"task": t, "tactics": g, "pivot_yields": pivot_yields(t, g, seeds)}
            for t in args.tasks.split(",")
            for g in tactics
        ]
        result = {"seeds": f"{seeds[0]}-{seeds[-1]}", "rows": rows}
        print(json.dumps(result) if args.json else yields_table(result))
        return 0
    result = run(
        args.tasks.split(","), tactics, list(args.seeds), list(args.train_seeds), args.workers
    )
    print(json.dumps(result) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
