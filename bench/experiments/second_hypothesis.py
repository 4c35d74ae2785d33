"""The policy's second hypothesis, tried in-process and not shipped: drop a core that looks like
a friend group when it forms, then grow the next hypothesis from the report.

    python bench/experiments/second_hypothesis.py [--task hard] [--tactics adaptive]
        [--campaigns 100-111] [--rounds 8] [--modes prior,learning] [--strangers 4]
        [--seeds 1] [--patience N] [--plain-engine] [--workers 2] [--json]

Plays bench/experiments/campaign_curves.py's campaigns with the rule player plus two moves the
shipped engine does not make:

- **the check**: when the CORE_AT_FLAGS-th account is flagged (once per set of flags), a core
  whose flagged accounts on a shared IP average fewer than `--strangers` IP strangers
  (bench/experiments/adaptive_losses.py: a household or campus network holds the friends
  themselves, a proxy exit node strangers) is dropped: its accounts are unflagged, never flagged
  again, and ruled out (`score_case`'s `ruled_out`), so they stop steering the exploration;
- **the next hypothesis**: once nothing is flagged, the best-scored starting account not ruled
  out is flagged and held (the rule does not unflag it: scored under the unflag threshold, it
  would be dropped at once), at most `--seeds` times a round. With `--patience N`, a held seed
  that is still the only flag N budget steps later is ruled out too.

The engine's own hypothesis from the report (tools/rules/engine.py, `HYPOTHESIS_AFTER`) plays
underneath, and scores with the report reader (tools/rules/report_reader.py), unless
`--plain-engine`: the figures in docs/design-decisions.md ("The second hypothesis, tried") were
measured before either existed, and `--plain-engine` plays them again.
`--strangers 0` never fires: the plain in-process player. Prints each mode's win rate and its
firings: members in the dropped core, budget left, whether the seed was a member, the round won.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments import campaign_curves  # noqa: E402
from bench.experiments.adaptive_losses import CORE_AT_FLAGS, ip_strangers  # noqa: E402
from fakegang.cli.train import parse_seed_range  # noqa: E402
from fakegang.tools.rules.actions import format_action, parse_step  # noqa: E402
from fakegang.tools.rules.engine import propose, score_observation  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.schema import PlainObservation  # noqa: E402
from fakegang_env.tasks import get_task  # noqa: E402


def friend_group(obs: PlainObservation, flagged: list[str], strangers: float) -> bool:
    """The core's accounts on a shared IP average fewer than `strangers` IP strangers (a core on
    no shared IP is not judged)."""
    found = ip_strangers(obs, flagged)
    return found is not None and found < strangers


@dataclass
class Hypotheses:
    """The player with the check and the next hypothesis; `firings` collects what they did."""

    strangers: float = 4.0
    seeds: int = 1
    patience: int | None = None
    plain_engine: bool = False  # the engine before its own hypothesis and its report reader
    firings: list[dict] = field(default_factory=list)

    def play(
        self, ep: Episode, weights: dict | None, yields: Mapping[str, float] | None = None
    ) -> tuple[PlainObservation, list[str]]:
        """One round, as campaign_curves.play plays it (the graph's action cap) plus the two
        moves."""
        obs = PlainObservation(**ep.observation())
        starting = list(obs.visible_account_ids)
        ring = set(ep.network.gang_ids)
        cap = get_task(ep.task).max_steps * 3
        unflagged: set[str] = set()
        ruled_out: set[str] = set()
        held: dict[str, str] = {}  # seeds, as verdicts the rule does not reverse
        hypotheses: list[tuple[str, int]] = []  # the engine's own, from the report
        seeded: list[tuple[str, int]] = []  # (seed, budget left when it was flagged)
        checked: set[frozenset[str]] = set()
        firings: list[dict] = []
        n = 0
        while not obs.done:
            flagged = list(obs.flagged_ids)
            if n >= cap:
                action = "submit"
            else:
                if len(flagged) == CORE_AT_FLAGS and frozenset(flagged) not in checked:
                    checked.add(frozenset(flagged))
                    if friend_group(obs, flagged, self.strangers):
                        ruled_out |= set(flagged)
                        firings.append(
                            {
                                "seed": ep.seed,
                                "core": sorted(flagged),
                                "members": len(ring & set(flagged)),
                                "budget_left": obs.steps_remaining,
                            }
                        )
                if (
                    self.patience is not None
                    and seeded
                    and flagged == [seeded[-1][0]]
                    and obs.steps_remaining <= seeded[-1][1] - self.patience
                ):
                    ruled_out.add(flagged[0])
                action, own = self._move(
                    obs, starting, weights, yields, ruled_out, held, unflagged, hypotheses
                )
                kind, account, _ = parse_step(action)
                if own and account:
                    hypotheses.append((account, obs.step_count))
                if kind == "flag" and account in held and account not in dict(seeded):
                    seeded.append((account, obs.steps_remaining))
                    if firings:
                        firings[-1].setdefault("seeds", []).append(account)
                        firings[-1].setdefault("seed_members", []).append(account in ring)
            kind, account, trace = parse_step(action)
            if kind == "unflag" and account:
                unflagged.add(account)
            obs = PlainObservation(**ep.step(kind, account, trace))
            n += 1
        won = obs.message.startswith("[WIN]")
        self.firings.extend({**f, "won": won} for f in firings)
        return obs, starting

    def _move(
        self,
        obs: PlainObservation,
        starting: list[str],
        weights: dict | None,
        yields: Mapping[str, float] | None,
        ruled_out: set[str],
        held: dict[str, str],
        unflagged: set[str],
        hypotheses: list[tuple[str, int]],
    ) -> tuple[str, bool]:
        """Unflag a ruled-out account, seed the next hypothesis, or the engine's proposal (and
        whether it flags one of the engine's own hypotheses)."""
        flagged = list(obs.flagged_ids)
        dropped = [a for a in flagged if a in ruled_out]
        if dropped:
            return format_action("unflag", dropped[0]), False
        scores = score_observation(
            obs, starting, weights, yields, ruled_out, read_report=not self.plain_engine
        )
        if ruled_out and not flagged and len(held) < self.seeds:
            likelihood = scores[0]
            left = [(likelihood[a], a) for a in starting if a in likelihood and a not in ruled_out]
            if left:
                seed = max(left)[1]
                held[seed] = "flag"
                return format_action("flag", seed), False
        proposal = propose(
            obs,
            starting,
            scores,
            unflagged=unflagged,
            pivot_yields=yields,
            llm_verdicts=held,
            hypotheses=None if self.plain_engine else hypotheses,
        )
        return proposal.action, proposal.hypothesis


def _job(args: tuple) -> dict:
    *campaign_args, strangers, seeds, patience, plain_engine = args
    player = Hypotheses(strangers, seeds, patience, plain_engine)
    out = campaign_curves.campaign(*campaign_args, player=player.play)
    return {**out, "firings": player.firings}


def summary(results: list[dict], modes: list[str]) -> dict:
    """Per mode: rounds, wins, win rate, and the firings (members in the dropped core, the seeds
    that were members, rounds won after a firing)."""
    out = {}
    for mode in modes:
        rounds = [r for res in results if res["mode"] == mode for r in res["rounds"]]
        firings = [f for res in results if res["mode"] == mode for f in res["firings"]]
        seeds = [m for f in firings for m in f.get("seed_members", [])]
        out[mode] = {
            "rounds": len(rounds),
            "won": sum(r["won"] for r in rounds),
            "win_rate": round(sum(r["won"] for r in rounds) / max(1, len(rounds)), 3),
            "firings": len(firings),
            "dropped_cores_with_a_member": sum(f["members"] > 0 for f in firings),
            "seeds": len(seeds),
            "seeds_members": sum(seeds),
            "won_after_firing": sum(f["won"] for f in firings),
            "budget_left": [f["budget_left"] for f in firings],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="hard")
    ap.add_argument("--tactics", default="adaptive")
    ap.add_argument("--campaigns", type=parse_seed_range, default=list(range(100, 112)))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--modes", default="prior,learning", help="of static, prior, learning")
    ap.add_argument("--strangers", type=float, default=4.0, help="0: the check never fires")
    ap.add_argument("--seeds", type=int, default=1, help="next hypotheses per round")
    ap.add_argument("--patience", type=int, default=None, help="budget steps a seed gets")
    ap.add_argument(
        "--plain-engine",
        action="store_true",
        help="the engine without its hypothesis and report reader (the documented figures)",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    modes = a.modes.split(",")
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(a.workers) as pool:
        jobs = [
            (
                a.task,
                a.tactics,
                c,
                a.rounds,
                m,
                tmp,
                a.strangers,
                a.seeds,
                a.patience,
                a.plain_engine,
            )
            for m in modes
            for c in a.campaigns
        ]
        results = list(pool.map(_job, jobs))
    out = summary(results, modes)
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        for mode, s in out.items():
            print(
                f"{mode}: won {s['won']} of {s['rounds']} ({s['win_rate']}); "
                f"{s['firings']} firings ({s['dropped_cores_with_a_member']} on a core with a "
                f"member), seeds {s['seeds_members']}/{s['seeds']} members, "
                f"{s['won_after_firing']} won after; budget left {s['budget_left']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
