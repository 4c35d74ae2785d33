"""Does the agent stop pivoting on a trace the operator killed?

    python bench/experiments/pivot_shift.py [--task medium] [--tactics aged_accounts]
                                [--trace creation]
                                [--campaigns 0-9] [--rounds 8] [--model fake] [--json]

A named generation G's campaign alternates regimes G, classic, G, ... (fakegang_env/tactics.py);
G kills one trace (aged_accounts: the creation window returns a crowd of ordinary users, since the
ring's accounts were bought aged). Rounds 0.. of every G regime (the first one included: the agent
starts from the shipped yields, a classic ring's) are bucketed by rounds since the regime began;
per bucket, the share of the agent's pivots that were on the killed trace, for `learning` and
`static` (learning off: shipped yields, no memory). The target: in `learning`, the share halves
within two rounds of a switch into G. Also prints both modes' win rate per bucket.
"""

from __future__ import annotations

import argparse
import json
import sys

from fakegang.cli.train import parse_seed_range
from fakegang.runs.campaign import play_campaign
from fakegang_env.traces import TRACES


def shift_table(task: str, tactics: str, trace: str, campaigns: list[int], rounds: int, model: str):
    out: dict = {"task": task, "tactics": tactics, "trace": trace}
    out["campaigns"] = [campaigns[0], campaigns[-1]]
    out["rounds"] = rounds
    for mode in ("static", "learning"):
        share: dict[int, list[int]] = {}  # rounds since the G regime began -> [on trace, all]
        wins: dict[int, list[int]] = {}
        for c in campaigns:
            res = play_campaign(task, tactics, c, rounds, model, mode)
            start = 0
            for k, row in enumerate(res["rounds"]):
                if k > 0 and row["regime"] != res["rounds"][k - 1]["regime"]:
                    start = k
                if row["regime"] % 2:  # a classic regime between two G regimes
                    continue
                b = k - start
                piv = row.get("pivots") or {}
                s = share.setdefault(b, [0, 0])
                s[0] += piv.get(trace, 0)
                s[1] += sum(piv.values())
                w = wins.setdefault(b, [0, 0])
                w[0] += bool(row["won"])
                w[1] += 1
        out[mode] = {
            "share_on_trace": [
                round(v[0] / v[1], 3) if v[1] else None for _, v in sorted(share.items())
            ],
            "pivots": [v[1] for _, v in sorted(share.items())],
            "win_rate": [round(v[0] / v[1], 3) for _, v in sorted(wins.items())],
            "rounds": [v[1] for _, v in sorted(wins.items())],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="medium")
    ap.add_argument("--tactics", default="aged_accounts")
    ap.add_argument("--trace", default="creation", choices=TRACES)
    ap.add_argument("--campaigns", default="0-9")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--model", default="fake")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    res = shift_table(a.task, a.tactics, a.trace, parse_seed_range(a.campaigns), a.rounds, a.model)
    if a.json:
        print(json.dumps(res))
        return 0
    print(
        f"{a.task} / {a.tactics}, campaigns {a.campaigns}, {a.rounds} rounds: share of pivots on "
        f"the {a.trace} trace by rounds since a regime of {a.tactics} began"
    )
    print(f"{'mode':10s} {'rounds since':>12s}  share on trace  pivots  win rate  rounds")
    for mode in ("static", "learning"):
        r = res[mode]
        for b, (s, n, w, k) in enumerate(
            zip(r["share_on_trace"], r["pivots"], r["win_rate"], r["rounds"], strict=True)
        ):
            shown = "-" if s is None else f"{s:.3f}"
            print(f"{mode:10s} {b:12d}  {shown:>14s}  {n:6d}  {w:8.3f}  {k:6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
