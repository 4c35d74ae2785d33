"""How far would a better learner go against the adaptive operator? Two ceilings, measured.

    python bench/experiments/learner_ceilings.py [--task hard] [--tactics adaptive]
        [--campaigns 0-19] [--rounds 10] [--agents prior,learning,playbook] [--workers 2]
        [--json]

Plays bench/experiments/campaign_curves.py's campaigns (the in-process rule player) with three
agents, each with two report readers:
- agents: `prior` and `learning` as campaign_curves plays them, and `playbook`, an agent that
  knows each round's playbook exactly and learns nothing: it scores with the tactics model's
  profile weights and trace yields at the round's true channel strengths
  (tools/learning/tactics_model.py), what learning would reach if it inferred the operator's
  current playbook perfectly and instantly, with the same linear model of what a playbook does;
- readers: the shipped report reader (tools/rules/report_reader.py), and an oracle that gives
  the reported member all of the report's share.
For the shipped reader it also keeps, per round, whether its likeliest starting account was the
reported member, and prints the win rate of the rounds it read right and of those it read wrong.

The engine has no hook for another reader (one reader is shipped and the graph pins nothing of
it), so the oracle replaces `report_reader.posterior` for the length of a round, in the worker
process that plays it.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments import campaign_curves  # noqa: E402
from fakegang.cli.train import parse_seed_range  # noqa: E402
from fakegang.tools.learning import tactics_model, trace_yields  # noqa: E402
from fakegang.tools.rules import report_reader  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.schema import AccountProfile, PlainObservation  # noqa: E402

READERS = ("shipped", "oracle")
AGENTS = ("prior", "learning", "playbook")


@contextmanager
def oracle_reader(reported: str) -> Iterator[None]:
    """While it is open, the report reader names `reported` with certainty (once every starting
    account is inspected, as the shipped reader answers only then)."""
    shipped = report_reader.posterior

    def posterior(
        task: str, profiles: Mapping[str, AccountProfile], starting: list[str]
    ) -> dict[str, float] | None:
        if any(a not in profiles for a in starting):
            return None
        return {a: float(a == reported) for a in starting}

    report_reader.posterior = posterior  # type: ignore[assignment]
    try:
        yield
    finally:
        report_reader.posterior = shipped


def read_right(ep: Episode, obs: PlainObservation, starting: list[str]) -> bool | None:
    """Whether the shipped reader's likeliest starting account is the reported member (None: it
    gave no answer)."""
    profiles = {p.account_id: p for p in obs.visible_accounts}
    shares = report_reader.posterior(ep.task, profiles, starting)
    if not shares:
        return None
    return max(sorted(shares), key=shares.__getitem__) == ep.network.reported_id


def knows_playbook(ep: Episode, weights: dict) -> tuple[dict, dict[str, float]]:
    """The `playbook` agent's weights and yields for a round: the tactics model at the round's
    true channel strengths, the rest of `weights` (the frontier model) as pinned."""
    strengths = dict(ep.playbook.channels)
    profile = tactics_model.profile_weights(ep.task, strengths)
    yields = trace_yields.prior(ep.task, {"strength": strengths})
    return {**weights, "profile": profile, "profile_model": None}, yields


def _job(args: tuple) -> dict:
    task, tactics, c, rounds, agent, reader = args
    readings: list[bool | None] = []

    def player(ep: Episode, weights: dict | None, yields: Mapping[str, float] | None = None):
        if agent == "playbook":
            weights, yields = knows_playbook(ep, weights or {})
        if reader == "oracle":
            with oracle_reader(ep.network.reported_id):
                return campaign_curves.play(ep, weights, yields)
        obs, starting = campaign_curves.play(ep, weights, yields)
        readings.append(read_right(ep, obs, starting))
        return obs, starting

    mode = "prior" if agent == "playbook" else agent  # the playbook agent learns nothing
    with tempfile.TemporaryDirectory() as db_dir:
        out = campaign_curves.campaign(task, tactics, c, rounds, mode, db_dir, player=player)
    out["agent"], out["reader"] = agent, reader
    if reader == "shipped":
        for row, right in zip(out["rounds"], readings, strict=True):
            row["read_right"] = right
    return out


def summary(results: list[dict], agents: list[str]) -> dict:
    """Per agent and reader: rounds, wins, win rate; for the shipped reader also its top-1 rate
    and the win rates of the rounds it read right and wrong."""
    out: dict[str, dict] = {}
    for agent in agents:
        for reader in READERS:
            rows = [
                r for res in results if (res["agent"], res["reader"]) == (agent, reader)
                for r in res["rounds"]
            ]  # fmt: skip
            won = sum(r["won"] for r in rows)
            entry = {"rounds": len(rows), "won": won, "win_rate": _rate(won, len(rows))}
            if reader == "shipped":
                right = [r for r in rows if r.get("read_right")]
                wrong = [r for r in rows if r.get("read_right") is False]
                entry["read_right"] = _rate(len(right), len(right) + len(wrong))
                entry["win_rate_read_right"] = _rate(sum(r["won"] for r in right), len(right))
                entry["win_rate_read_wrong"] = _rate(sum(r["won"] for r in wrong), len(wrong))
            out[f"{agent}/{reader}"] = entry
    return out


def _rate(n: int, total: int) -> float | None:
    return round(n / total, 3) if total else None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="hard")
    ap.add_argument("--tactics", default="adaptive")
    ap.add_argument("--campaigns", default="0-19")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    agents = args.agents.split(",")
    unknown = sorted(set(agents) - set(AGENTS))
    if unknown:
        ap.error(f"unknown agents {unknown}; known: {', '.join(AGENTS)}")
    jobs = [
        (args.task, args.tactics, c, args.rounds, agent, reader)
        for c in parse_seed_range(args.campaigns)
        for agent in agents
        for reader in READERS
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(_job, jobs))
    found = summary(results, agents)
    if args.json:
        print(json.dumps({"command": " ".join(sys.argv), "summary": found}, indent=1))
        return
    for key, entry in found.items():
        print(key, entry)


if __name__ == "__main__":
    main()
