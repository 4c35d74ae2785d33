"""Calibration of the environment against ENVIRONMENT.md, printed as one table per task.

Per task, over a seed range (default 0-49):
  * best single-signal F1: for every raw numeric signal, the best one-threshold rule (either
    direction, threshold chosen per seed with hindsight) for "gang vs every other account";
    reported as the mean over seeds of the per-seed best F1, per signal, plus the worst case;
  * classifier F1: gradient boosting on all raw signals plus graph features relative to the
    reported member, trained on seeds 100-149 and tested on the chosen seeds (pooled F1);
  * random / naive / oracle: win rate, mean grader score, mean steps used; plus `probe`, a
    ~100-line evidence-combining investigator (bench/experiments/evidence_probe.py) showing the
    ring is findable within the budget by combining lockstep evidence;
  * speed: median time to generate a hard network and in-process steps per second.

Usage: python bench/experiments/env_calibration.py [--seeds 0-49] [--tasks easy,medium,hard]
           [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from fakegang_env.engine import Episode
from fakegang_env.generator import NUMERIC_SIGNALS, Network, generate_network
from fakegang_env.policies import POLICY_NAMES, NaivePolicy, run_policy
from fakegang_env.tasks import TASK_NAMES

TARGET_SINGLE = {"medium": 0.75, "hard": 0.60}
TARGET_CLASSIFIER = 0.95
TRAIN_SEEDS = range(100, 150)
RELATIONAL = ("follow_jaccard", "mutual_with_reported", "age_diff", "hour_diff", "same_ip")


def parse_seeds(text: str) -> list[int]:
    """`0-49` or `3` or `1,5,9` -> a list of seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            seeds.extend(range(int(a), int(b) + 1))
        else:
            seeds.append(int(part))
    if not seeds or min(seeds) < 0:
        raise ValueError(f"bad seed range {text!r}")
    return seeds


def best_threshold_f1(values: list[float], labels: list[bool]) -> float:
    """Best F1 of `x >= t` or `x <= t` over every threshold t (hindsight, one direction each)."""
    pos = sum(labels)
    if pos == 0:
        return 0.0
    best = 0.0
    for sign in (1.0, -1.0):
        pairs = sorted(zip(values, labels, strict=True), key=lambda p: -sign * p[0])
        tp = n = 0
        i = 0
        while i < len(pairs):
            v = pairs[i][0]
            while i < len(pairs) and pairs[i][0] == v:  # ties go in together
                tp += pairs[i][1]
                n += 1
                i += 1
            best = max(best, 2 * tp / (n + pos))
    return best


def single_signal_f1(net: Network) -> dict[str, float]:
    """Per-signal best one-threshold F1 on one network (all accounts, pre-evasion)."""
    ids = list(net.accounts)
    sig = [net.signals(a) for a in ids]
    labels = [net.accounts[a].is_gang for a in ids]
    return {s: best_threshold_f1([float(x[s]) for x in sig], labels) for s in NUMERIC_SIGNALS}


def relational_features(net: Network) -> tuple[list[list[float]], list[bool], list[str]]:
    """Raw signals plus features relative to the reported member, for every other account."""
    r = net.reported_id
    ra = net.accounts[r]
    rf = set(ra.follows)
    r_followers = set(net.followers_of(r))
    rows, labels, names = [], [], list(NUMERIC_SIGNALS) + list(RELATIONAL)
    for aid, a in net.accounts.items():
        if aid == r:
            continue
        s = net.signals(aid)
        f = set(a.follows)
        union = f | rf
        jac = len(f & rf) / len(union) if union else 0.0
        mutual = float(aid in rf) + float(aid in r_followers)
        dh = abs(a.avg_post_hour - ra.avg_post_hour) % 24.0
        rows.append(
            [float(s[k]) for k in NUMERIC_SIGNALS]
            + [
                jac,
                mutual,
                abs(a.account_age_days - ra.account_age_days),
                min(dh, 24.0 - dh),
                float(a.ip_cluster_id == ra.ip_cluster_id),
            ]
        )
        labels.append(a.is_gang)
    return rows, labels, names


def classifier_f1(task: str, test_seeds: list[int]) -> tuple[float, dict[str, float]]:
    """Gradient boosting on signals + relational features; train seeds 100-149, pooled test F1.

    Also returns, per relational feature alone, the mean per-seed best one-threshold F1 on the
    test seeds: how far a single comparison with the reported member gets.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import f1_score

    def dataset(seeds):
        xs, ys, per_seed = [], [], []
        for s in seeds:
            x, y, _ = relational_features(generate_network(task, s))
            xs += x
            ys += y
            per_seed.append((x, y))
        return xs, ys, per_seed

    xtr, ytr, _ = dataset(TRAIN_SEEDS)
    xte, yte, per_seed = dataset(test_seeds)
    clf = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.1, random_state=0)
    clf.fit(xtr, ytr)
    base = len(NUMERIC_SIGNALS)
    single = {
        name: statistics.mean(
            best_threshold_f1([row[base + j] for row in x], y) for x, y in per_seed
        )
        for j, name in enumerate(RELATIONAL)
    }
    return float(f1_score(yte, clf.predict(xte))), single


def policy_stats(name: str, task: str, seeds: list[int]) -> dict:
    if name == "probe":
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench.* imports
        from bench.experiments.evidence_probe import run_probe

        runs = [run_probe(task, s) for s in seeds]
    else:
        runs = [run_policy(name, task, s) for s in seeds]
    return {
        "win_rate": sum(r["won"] for r in runs) / len(runs),
        "mean_grader": statistics.mean(r["grader_score"] for r in runs),
        "mean_steps": statistics.mean(r["steps_used"] for r in runs),
    }


def speed(task: str = "hard", n: int = 15) -> dict:
    """Median generation time, and in-process step+observation rate over full episodes."""
    gen = []
    for s in range(n):
        t0 = time.perf_counter()
        generate_network(task, 1000 + s)
        gen.append(time.perf_counter() - t0)
    steps = 0
    elapsed = 0.0
    for s in range(5):
        ep = Episode(task, s)
        obs = ep.observation()
        pol = NaivePolicy()
        t0 = time.perf_counter()
        while not ep.done:
            obs = ep.step(*pol.act(obs))
            steps += 1
        elapsed += time.perf_counter() - t0
    return {
        "generate_median_ms": 1000 * statistics.median(gen),
        "steps_per_s": steps / elapsed,
    }


def calibrate(task: str, seeds: list[int]) -> dict:
    per_seed = [single_signal_f1(generate_network(task, s)) for s in seeds]
    mean_f1 = {k: statistics.mean(d[k] for d in per_seed) for k in NUMERIC_SIGNALS}
    best_sig = max(mean_f1, key=mean_f1.get)
    clf_f1, relational = classifier_f1(task, seeds)
    return {
        "task": task,
        "seeds": [seeds[0], seeds[-1]] if seeds == list(range(seeds[0], seeds[-1] + 1)) else seeds,
        "single_signal_mean_f1": mean_f1,
        "best_single_signal": best_sig,
        "best_single_f1": mean_f1[best_sig],
        "max_single_f1_any_seed": max(max(d.values()) for d in per_seed),
        "single_target": TARGET_SINGLE.get(task),
        "classifier_f1": clf_f1,
        "relational_single_mean_f1": relational,
        "policies": {p: policy_stats(p, task, seeds) for p in (*POLICY_NAMES, "probe")},
    }


def print_table(res: dict) -> None:
    t = res["task"]
    target = res["single_target"]
    print(f"\n== {t} (seeds {res['seeds']}) ==")
    print("single-signal best-threshold F1 (mean over seeds of per-seed best):")
    for k, v in sorted(res["single_signal_mean_f1"].items(), key=lambda kv: -kv[1]):
        print(f"  {k:22s} {v:.3f}")
    ok = "" if target is None else ("  OK" if res["best_single_f1"] <= target else "  FAIL")
    print(
        f"best single signal     {res['best_single_signal']} {res['best_single_f1']:.3f}"
        f" (target <= {target}){ok}; worst single seed {res['max_single_f1_any_seed']:.3f}"
    )
    c = res["classifier_f1"]
    print(f"classifier F1          {c:.3f} (target >= {TARGET_CLASSIFIER})")
    rel = ", ".join(
        f"{k} {v:.2f}"
        for k, v in sorted(res["relational_single_mean_f1"].items(), key=lambda kv: -kv[1])
    )
    print(f"one feature vs the reported member alone (mean best F1): {rel}")
    print(f"{'policy':8s} {'win':>6s} {'grader':>7s} {'steps':>6s}")
    for p, s in res["policies"].items():
        print(f"{p:8s} {s['win_rate']:6.0%} {s['mean_grader']:7.3f} {s['mean_steps']:6.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-49")
    ap.add_argument("--tasks", default=",".join(TASK_NAMES))
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = ap.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError:
        ap.error(f"--seeds wants A-B, N or a comma list of seeds >= 0, got {args.seeds!r}")
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in TASK_NAMES]
    if unknown or not tasks:
        ap.error(f"unknown task(s) {unknown}; valid: {', '.join(TASK_NAMES)}")
    out = {"tasks": [calibrate(t, seeds) for t in tasks], "speed": speed()}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for res in out["tasks"]:
        print_table(res)
    sp = out["speed"]
    print(
        f"\nspeed: generate hard network median {sp['generate_median_ms']:.1f} ms; "
        f"in-process hard step+observation {sp['steps_per_s']:.0f} steps/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
