"""How far can refitting carry the rule engine within one regime of a campaign?

    python bench/experiments/refit_ceiling.py [--task hard] [--campaigns 0-9] [--tests 4] [--json]

For each campaign, the first regime's hidden playbook is played K times on training seeds
(60000 + 100·campaign + i) with the agent's own learning loop (labelled debrief rows, MAP refit,
new weights after every episode, tools/learning/experience.py), and after K = 0, 1, 2, 3, 6
episodes the refit weights play `--tests` unseen seeds (70000 + 100·campaign + j) of that same
playbook. This is the best case for learning inside a campaign: every training episode comes from
the current regime, none from an older one. If the win rate plateaus here well below the campaign
targets, the limit is the rule engine's policy and features, not how fast it learns.

The losses after the last K are sorted by what went wrong (`loss_modes`; a loss can show several):
too many false flags, members inspected but left unflagged, members visible but never inspected,
members never visible. Each mode asks for a different fix (a flag threshold, the profile model,
exploration, evidence the environment does not give).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.experiments.campaign_curves import play  # noqa: E402
from fakegang.cli.train import parse_seed_range  # noqa: E402
from fakegang.tools.learning import experience  # noqa: E402
from fakegang.tools.memory.store import Memory  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.schema import PlainObservation  # noqa: E402
from fakegang_env.tactics import campaign_round  # noqa: E402
from fakegang_env.tasks import get_task  # noqa: E402

KS = (0, 1, 2, 3, 6)
TRAIN_BASE, TEST_BASE = 60000, 70000
LOSS_MODES = ("false flags", "inspected, not flagged", "visible, never inspected", "never visible")


def loss_modes(task: str, obs: PlainObservation) -> list[str]:
    """What a finished episode's debrief shows went wrong (empty for a win)."""
    if obs.message.startswith("[WIN]"):
        return []
    ring, flagged = set(obs.ring_ids or []), set(obs.flagged_ids)
    inspected, visible = set(obs.inspected_ids), set(obs.visible_account_ids)
    precision = len(flagged & ring) / len(flagged) if flagged else 1.0  # no flag: none false
    checks = (
        precision < get_task(task).win_precision,
        bool(ring & inspected - flagged),
        bool(ring & visible - inspected),
        bool(ring - visible),
    )
    return [mode for mode, hit in zip(LOSS_MODES, checks, strict=True) if hit]


def ceiling(task: str, campaign: int, tests: int) -> tuple[dict[int, float], list[list[str]]]:
    """Win rate on unseen seeds of the campaign's first playbook after K refit episodes, and the
    loss modes of the test episodes after the last K."""
    playbook = campaign_round(task, campaign, 0, "mixed").playbook
    out: dict[int, float] = {}
    losses: list[list[str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "memory.sqlite")
        weights = None
        for k in range(max(KS) + 1):
            if k in KS:
                wins = 0
                for j in range(tests):
                    ep = Episode(task, TEST_BASE + 100 * campaign + j, tactics=playbook)
                    obs, _ = play(ep, weights)
                    won = obs.message.startswith("[WIN]")
                    wins += won
                    if k == max(KS) and not won:
                        losses.append(loss_modes(task, obs))
                out[k] = wins / tests
            if k == max(KS):
                break
            ep = Episode(task, TRAIN_BASE + 100 * campaign + k, tactics=playbook)
            obs, starting = play(ep, weights)
            base = weights or experience.load_weights()
            rows = experience.labelled_rows(obs, starting, set(obs.ring_ids or []), base)
            experience.store_experience(memory, task, f"train-{k}", rows)
            weights = experience.refit_task(memory, task, f"train-{k}").as_rule_weights()
        memory.close()
    return out, losses


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="hard")
    p.add_argument("--campaigns", type=parse_seed_range, default=list(range(10)))
    p.add_argument("--tests", type=int, default=4, help="unseen seeds per campaign and K")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(ceiling, args.task, c, args.tests) for c in args.campaigns]
        per_campaign = [f.result() for f in futures]
    mean = {k: round(sum(r[k] for r, _ in per_campaign) / len(per_campaign), 3) for k in KS}
    losses = [modes for _, campaign_losses in per_campaign for modes in campaign_losses]
    result = {
        "task": args.task,
        "campaigns": list(args.campaigns),
        "tests_per_campaign": args.tests,
        "win_rate_after_k": mean,
        "losses_after_last_k": len(losses),
        "loss_modes_after_last_k": {m: sum(m in modes for modes in losses) for m in LOSS_MODES},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"REFIT CEILING ({args.task}, first regime of mixed campaigns {args.campaigns[0]}-"
            f"{args.campaigns[-1]}, {args.tests} unseen seeds each)"
        )
        for k in KS:
            print(f"  after {k} refit episode(s) of the playbook: win {mean[k]:.0%}")
        print(f"  losses after {max(KS)}: {len(losses)}, showing (a loss can show several):")
        for mode, n in result["loss_modes_after_last_k"].items():
            print(f"    {mode:<26} {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
