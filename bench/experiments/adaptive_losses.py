"""Why does the learning agent lose a round of an adaptive campaign?

    python bench/experiments/adaptive_losses.py [--task hard] [--tactics adaptive]
                                    [--campaigns 100-111] [--rounds 8] [--workers 2] [--json]

Plays `learning` in-process (an adaptive campaign, or the campaign of another `--tactics`), as
bench/experiments/campaign_curves.py does, and for every round keeps what decides it: the scores
of the starting accounts once the report is read (the reported member against the best
look-alike), where the reported member ranks among them for the learner
and for the frozen prior reading the same observation, how many ring members were ever
inspected, the roles of the innocents flagged, and the core at the fourth flag: how many of it
are members, its IP strangers (accounts on the flagged accounts' IPs that nobody inspected, what
a proxy exit node has and a household does not) and its co-following outside itself. Prints each
lost round and a summary: losses in which the first member was never recognised (scored under
0.5 after the report), in which the learner ranked it first anyway, in which at most two members
were ever inspected, the false flags by role, and both signals for right and wrong cores.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments.campaign_curves import learn, play  # noqa: E402
from fakegang.cli.train import parse_seed_range
from fakegang.tools.learning import experience, trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules.engine import FLAG_AT, Proposal, score_observation
from fakegang.tools.rules.evidence import jaccard
from fakegang_env.engine import Episode
from fakegang_env.operator import after_round, opening
from fakegang_env.schema import PlainObservation
from fakegang_env.tactics import ADAPTIVE, campaign_round

READING = "read the report"  # the engine's reason while it inspects the starting accounts


#: The core is judged at this many flags: past the first flags, before most of a round's budget.
CORE_AT_FLAGS = 4


def ip_strangers(obs: PlainObservation, accounts: list[str]) -> float | None:
    """Mean over `accounts` on a shared IP of the accounts on their IP nobody inspected (None:
    none of them shares an IP)."""
    profiles = {p.account_id: p for p in obs.visible_accounts}
    seen = Counter(p.ip_cluster_id for p in profiles.values())
    counts = [
        profiles[a].shared_ip_count - (seen[profiles[a].ip_cluster_id] - 1)
        for a in accounts
        if a in profiles and profiles[a].shared_ip_count > 0
    ]
    return round(sum(counts) / len(counts), 2) if counts else None


def cofollow(obs: PlainObservation, accounts: list[str]) -> float | None:
    """Mean Jaccard of two of `accounts`' follows outside them (None: fewer than two inspected)."""
    follows = {a: set(fs) for a, fs in obs.graph_edges.items()}
    inside = [a for a in accounts if a in follows]
    core = set(inside)
    pairs = [
        jaccard(follows[a] - core, follows[b] - core)
        for i, a in enumerate(inside)
        for b in inside[i + 1 :]
    ]
    return round(sum(pairs) / len(pairs), 3) if pairs else None


def rank_of(scores: dict[str, float], account: str) -> int:
    """0 for the best-scored account of `scores` (ties in the order given)."""
    order = sorted(scores, key=lambda a: -scores[a])
    return order.index(account)


def play_round(ep: Episode, weights: dict, yields: dict, prior: dict) -> tuple[dict, dict]:
    """One round as campaign_curves plays it; what the report's reading left (the starting
    accounts' scores by the pinned weights and by the frozen `prior` on the same observation,
    at the first proposal that is not one of its inspections) and the core at CORE_AT_FLAGS
    flags."""
    read: dict[str, dict[str, float]] = {}
    core: dict[str, object] = {}

    def watch(_ep: Episode, obs: PlainObservation, start: list[str], p: Proposal) -> None:
        if not read and READING not in p.reason:
            read["pinned"] = {a: p.likelihood.get(a, 0.0) for a in start}
            frozen, _ = score_observation(obs, start, prior, yields)
            read["prior"] = {a: frozen.get(a, 0.0) for a in start}
        if not core and len(obs.flagged_ids) >= CORE_AT_FLAGS:
            flagged = list(obs.flagged_ids)
            core.update(
                flagged=flagged,
                strangers=ip_strangers(obs, flagged),
                cofollow=cofollow(obs, flagged),
            )

    played = play(ep, weights, yields, watch)
    return {"played": played, **read}, core


def campaign(task: str, c: int, rounds: int, db_dir: str, tactics: str = ADAPTIVE) -> list[dict]:
    """One campaign played by the learning agent: a row per round."""
    memory = Memory(Path(db_dir) / f"{task}-{tactics}-{c}.sqlite")
    weights = experience.latest_version(memory, task).as_rule_weights()
    prior = dict(weights)  # what `prior` plays: learning's starting point, frozen
    yields = trace_yields.prior(task, None)
    adaptive = tactics == ADAPTIVE
    operator = opening(task, c) if adaptive else None
    out = []
    for k in range(rounds):
        ep = (
            Episode.for_adaptive_round(operator)
            if adaptive
            else Episode.for_round(task, c, k, tactics)
        )
        ring = set(ep.network.gang_ids)
        reading, core = play_round(ep, weights, yields, prior)
        (obs, starting), read = reading["played"], reading["pinned"]
        flagged, inspected = set(obs.flagged_ids), set(obs.inspected_ids)
        reported = next(a for a in starting if a in ring)
        member = read[reported]
        best = max((a for a in starting if a not in ring), key=lambda a: read.get(a, 0.0))
        if adaptive:
            report, operator = after_round(operator, ep.network, obs.flagged_ids)
            playbook = report.playbook
        else:
            playbook = campaign_round(task, c, k, tactics).playbook.channels
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
                "member_rank": rank_of(read, reported),
                "member_rank_by_prior": rank_of(reading["prior"], reported),
                "core_members": len(set(core.get("flagged", [])) & ring) if core else None,
                "core_ip_strangers": core.get("strangers"),
                "core_cofollow": core.get("cofollow"),
                "weakened": sorted(t for t, v in playbook.items() if v < 0.5),
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
        "member_ranked_first_yet_lost": sum(r["member_rank"] == 0 for r in lost),
        "member_ranked_first": sum(r["member_rank"] == 0 for r in rows),
        "member_ranked_first_by_prior": sum(r["member_rank_by_prior"] == 0 for r in rows),
        "at_most_two_members_inspected": sum(r["members_inspected"] <= 2 for r in lost),
        "no_right_flag": sum(r["right_flags"] == 0 for r in lost),
        "false_flags": sum(false_flags.values()),
        "false_flags_by_role": dict(false_flags.most_common()),
        **{
            key: {
                "ring": _quartiles(rows, key, lambda n: n >= CORE_AT_FLAGS - 1),
                "wrong": _quartiles(rows, key, lambda n: n == 0),
            }
            for key in ("core_ip_strangers", "core_cofollow")
        },
    }


def _quartiles(rows: list[dict], key: str, members_ok) -> dict:
    """How many cores at CORE_AT_FLAGS flags had `members_ok(members)`, how many of them had
    no value of `key` (no shared IP, fewer than two inspected), and the others' range and
    quartiles."""
    cores = [r for r in rows if r.get("core_members") is not None and members_ok(r["core_members"])]
    values = sorted(r[key] for r in cores if r.get(key) is not None)
    quartiles = [values[len(values) * q // 4] for q in (1, 2, 3)] if values else []
    return {"cores": len(cores), "no_value": len(cores) - len(values),
            "range": [values[0], values[-1]] if values else [], "quartiles": quartiles}  # fmt: skip


def _job(args: tuple) -> list[dict]:
    return campaign(*args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="hard")
    ap.add_argument("--tactics", default=ADAPTIVE)
    ap.add_argument("--campaigns", type=parse_seed_range, default=list(range(100, 112)))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print the rows and summary as JSON")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(a.workers) as pool:
        jobs = [(a.task, c, a.rounds, tmp, a.tactics) for c in a.campaigns]
        rows = [r for rounds in pool.map(_job, jobs) for r in rounds]
    result = {
        "task": a.task,
        "tactics": a.tactics,
        "campaigns": a.campaigns,
        "summary": summary(rows),
        "rows": rows,
    }
    if a.json:
        print(json.dumps(result, indent=1))
        return 0
    for r in rows:
        if not r["won"]:
            print(
                f"campaign {r['campaign']} round {r['round']}: "
                f"member {r['member_after_report']:.2f}"
                f" vs {r['best_lookalike_role']} {r['best_lookalike_after_report']:.2f} after the"
                f" report (ranked {r['member_rank'] + 1}, by the prior"
                f" {r['member_rank_by_prior'] + 1}); {r['members_inspected']}/{r['ring']}"
                " members inspected, "
                f"{r['right_flags']} right and {len(r['false_flags'])} false flags; "
                f"weakened {', '.join(r['weakened'])}"
            )
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
