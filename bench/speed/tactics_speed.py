"""Generation speed of a hard network under every playbook (target: < 0.2 s each).

Times `generate_network("hard", seed, playbook)` (the classic build plus the playbook pass) for
classic, every named generation and `mixed` (a different mix per seed), median and max per
tactics over the seeds; and the playbook pass alone (`apply_playbook` on a copy of the classic
network), which is the part tactics add and is less sensitive to a loaded machine.

Usage: python bench/speed/tactics_speed.py [--seeds 0-9] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.speed.timing import lap, spread  # noqa: E402
from fakegang_env.arguments import seed_range  # noqa: E402
from fakegang_env.generator import generate_network
from fakegang_env.playbook import apply_playbook
from fakegang_env.tactics import TACTICS_NAMES, resolve_playbook

TASK = "hard"
TARGET_S = 0.2


def bench(seeds: list[int]) -> dict[str, Any]:
    rows = {}
    classic = {seed: generate_network(TASK, seed) for seed in seeds}
    for tactics in TACTICS_NAMES:
        times: list[float] = []
        passes: list[float] = []
        for seed in seeds:
            playbook = resolve_playbook(TASK, seed, tactics)
            with lap(times):
                generate_network(TASK, seed, playbook)
            net = classic[seed].copy()
            with lap(passes):
                apply_playbook(net, playbook)
        generation = spread(times, scale=1000, digits=1)
        rows[tactics] = {
            "median_ms": generation["median"],
            "max_ms": generation["max"],
            "pass_median_ms": spread(passes, scale=1000, digits=2)["median"],
        }
    worst = max(r["max_ms"] for r in rows.values())
    return {
        "task": TASK,
        "seeds": len(seeds),
        "per_tactics": rows,
        "worst_ms": worst,
        "target_ms": TARGET_S * 1000,
        "ok": worst < TARGET_S * 1000,
    }


def table(result: dict[str, Any]) -> str:
    lines = [f"hard network generation per tactics ({result['seeds']} seeds)"]
    for name, r in result["per_tactics"].items():
        lines.append(
            f"  {name:<20} median {r['median_ms']:6.1f} ms   max {r['max_ms']:6.1f} ms   "
            f"playbook pass {r['pass_median_ms']:5.2f} ms"
        )
    verdict = "ok" if result["ok"] else "OVER"
    lines.append(
        f"  worst {result['worst_ms']:.1f} ms (target < {result['target_ms']:.0f} ms: {verdict})"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=seed_range, default=range(10))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    result = bench(list(args.seeds))
    print(json.dumps(result) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
