"""Fit the shipped pivot yields: per task and trace kind, how many other ring members share a
member's value, on classic networks of training seeds.

    python bench/fits/fit_trace_yields.py [--seeds 1000-1049] [--tasks easy medium hard]

For every member of every seed's fresh classic network and every kind of the trace catalogue:
the other members a pivot from it would find (all of them, not only the first page), mean over
members, rounded to 0.1. Writes tools/rules/pivot_yields.json, which tools/rules/pivots.py reads
(the rule engine's prior yield per trace; tools/learning/trace_yields.py scales it by the
tactics estimate and updates it from debriefs). A new trace kind gets its yield by re-running
this script.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fakegang_env.arguments import seed_range
from fakegang_env.generator import generate_network
from fakegang_env.tasks import TASK_NAMES
from fakegang_env.trace_catalogue import trace_names

OUT = Path(__file__).resolve().parents[2] / "tools" / "rules" / "pivot_yields.json"
SEEDS = range(1000, 1050)


def member_yields(task: str, seeds: range | list[int]) -> dict[str, float]:
    """Trace -> other members sharing a member's value, mean over every member of `seeds`."""
    names = trace_names()
    found = dict.fromkeys(names, 0)
    members = 0
    for seed in seeds:
        net = generate_network(task, seed)
        assert net.traces is not None
        ring = set(net.gang_ids)
        for member in net.gang_ids:
            members += 1
            for t in names:
                found[t] += sum(a in ring for a in net.traces.matches(net, t, member))
    return {t: round(found[t] / members, 1) for t in names}


def fit(tasks: list[str], seeds: range | list[int]) -> dict:
    """The JSON document: the fit's note and the yields per task."""
    seeds = list(seeds)
    span = f"{seeds[0]}-{seeds[-1]}"
    return {
        "note": f"fitted by bench/fits/fit_trace_yields.py --seeds {span} (classic networks)",
        "yields": {task: member_yields(task, seeds) for task in tasks},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=seed_range, default=SEEDS)
    p.add_argument("--tasks", nargs="+", default=list(TASK_NAMES), choices=TASK_NAMES)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    if min(args.seeds) < 1000:
        p.error("--seeds must be training seeds (>= 1000), disjoint from the test seeds")
    doc = fit(args.tasks, args.seeds)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}: " + json.dumps(doc["yields"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
