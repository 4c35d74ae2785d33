"""Why does the learning agent lose a round of an adaptive campaign?

    python bench/experiments/adaptive_losses.py [--task hard] [--campaigns 100-111]
                                    [--rounds 8] [--workers 2] [--json]

Plays `learning` in-process, as bench/experiments/campaign_curves.py does, and for every round
keeps what decides it: the scores of the starting accounts once the report is read (the reported
member against the best look-alike), how many ring members were ever inspected, and the roles of
the innocents flagged. Prints each lost round and a summary: losses in which the first member was
never recognised (scored under 0.5 after the report), in which at most two members were ever
inspected, and the false flags by role.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench.experiments.campaign_curves import learn, play
from fakegang.cli.train import parse_seed_range
from fakegang.tools.learning import experience, trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules.engine import FLAG_AT, Proposal
from fakegang_env.engine import Episode
from fakegang_env.operator import after_round, opening
from fakegang_env.schema import PlainObservation

READING = "read the report"  # the engine's reason while it inspects the starting accounts


def play_round(
    ep: Episode, weights: dict, yields: dict
) -> tuple[PlainObservation, list[str], dict[str, float]]:
    """One round as campaign_curves plays it, and the starting accounts' scores once the report
    is read (the first proposal that is not one of its inspections)."""
    read: dict[str, float] = {}

    def after_report(_ep: Episode, _obs: PlainObservation, start: list[str], p: Proposal) -> None:
        if not read and READING not in p.reason:
            read.update({a: p.likelihood.get(a, 0.0) for a in start})

    obs, starting = play(ep, weights, yields, after_report)
    return obs, starting, read


def campaign(task: str, c: int, rounds: int, db_dir: str) -> list[dict]:
    """One adaptive campaign played by the learning agent: a row per round."""
    memory = Memory(Path(db_dir) / f"{task}-{c}.sqlite")
    weights = experience.latest_version(memory, task).as_rule_weights()
    yields = trace_yields.prior(task, None)
    operator = opening(task, c)
    out = []
    for k in range(rounds):
        ep = Episode.for_adaptive_round(operator)
        ring = set(ep.network.gang_ids)
        obs, starting, read = play_round(ep, weights, yields)
        flagged, inspected = set(obs.flagged_ids), set(obs.inspected_ids)
        member = max((read.get(a, 0.0) for a in starting if a in ring), default=0.0)
        best = max((a for a in starting if a not in ring), key=lambda a: read.get(a, 0.0))
        report, operator = after_round(operator, ep.network, obs.flagged_ids)
        out.append(
            {
                "campaign": c,
                "round": k,
                "won": obs.message.startswith("[WIN]"),
                "ring": len(ring),
                "members_inspected": len(inspected & ring),
                "right_flags": len(flagged & ring),
                "false_flags": sorted(ep.network.accounts[a].role for a in flagged - ring),
                "member_after_report": round(member, 3),
                "best_lookalike_after_report": round(read.get(best, 0.0), 3),
                "best_lookalike_role": ep.network.accounts[best].role,
                "weakened": sorted(t for t, v in report.playbook.items() if v < 0.5),
            }
        )
        weights, yields = learn(memory, task, f"c{c}-r{k}", obs, starting, weights)
    memory.close()
    return out


def summary(rows: list[dict]) -> dict:
    """What the lost rounds have in common."""
    lost = [r for r in rows if not r["won"]]
    false_flags = Counter(role for r in lost for role in r["false_flags"])
    return {
        "rounds": len(rows),
        "lost": len(lost),
        "member_unrecognised": sum(r["member_after_report"] < FLAG_AT for r in lost),
        "member_below_a_lookalike": sum(
            r["member_after_report"] < r["best_lookalike_after_report"] for r in lost
        ),
        "at_most_two_members_inspected": sum(r["members_inspected"] <= 2 for r in lost),
        "no_right_flag": sum(r["right_flags"] == 0 for r in lost),
        "false_flags": sum(false_flags.values()),
        "false_flags_by_role": dict(false_flags.most_common()),
    }


def _job(args: tuple) -> list[dict]:
    return campaign(*args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="hard")
    ap.add_argument("--campaigns", type=parse_seed_range, default=list(range(100, 112)))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print the rows and summary as JSON")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(a.workers) as pool:
        jobs = [(a.task, c, a.rounds, tmp) for c in a.campaigns]
        rows = [r for rounds in pool.map(_job, jobs) for r in rounds]
    result = {"task": a.task, "campaigns": a.campaigns, "summary": summary(rows), "rows": rows}
    if a.json:
        print(json.dumps(result, indent=1))
        return 0
    for r in rows:
        if not r["won"]:
            print(
                f"campaign {r['campaign']} round {r['round']}: "
                f"member {r['member_after_report']:.2f}"
                f" vs {r['best_lookalike_role']} {r['best_lookalike_after_report']:.2f} after the"
                f" report; {r['members_inspected']}/{r['ring']} members inspected, "
                f"{r['right_flags']} right and {len(r['false_flags'])} false flags; "
                f"weakened {', '.join(r['weakened'])}"
            )
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
