"""LLM call latency: decisions with a cold prompt vs. with the KV-cache prefix reused, and
reflections.  Prints a table (run by `make bench`).

Prompts are the agent's real ones: the successive inspect steps of hard episodes (rule engine
driving; where a trained run asks the LLM most: 652 of 848 calls in a measured `make run`),
rendered by `fakegang.tools.models.prompting` with 4 lessons and a few-shot trajectory in the stable
part, the per-step case last.  "cold" resets the llama.cpp context before each call so the
whole prompt is evaluated; "prefix reuse" runs the steps in order as an episode does, so only
the changed suffix is evaluated.  For non-local models "cold" cannot be forced and is skipped.

Usage: python bench/speed/llm_latency.py [--model local] [--calls 5] [--task hard]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.speed.timing import median as _median  # noqa: E402
from bench.speed.timing import timed  # noqa: E402
from fakegang.tools.models.chat_models import (  # noqa: E402
    ModelSettings,
    describe_model,
    make_chat_model,
)
from fakegang.tools.models.llm import LLMCallResult, decide, reflect  # noqa: E402

LESSONS = [
    "Flag only when lockstep creation dates and a shared bio template agree; a shared IP alone "
    "is weak because carrier NAT and VPNs put strangers together.",
    "Inspect the accounts that the flagged members follow in common first; the ring's "
    "customers are followed by everyone but are innocent, so do not flag them.",
    "I submitted too early with budget left and missed four members; keep exploring while a "
    "frontier account has P above 0.3.",
    "Unflag an account when its inspected profile shows an old account, an irregular posting "
    "hour and no mutual follows with the ring.",
]


def episode_prompts(
    n: int, task: str = "hard"
) -> tuple[list[tuple[str, str, list[str]]], tuple[str, str], str]:
    """n+1 decision prompts from the successive inspect steps of `task` episodes (the steps at
    which a trained agent consults the LLM), a reflection prompt, and a label of the source."""
    from fakegang.tools.memory.store import Reflection, Trajectory
    from fakegang.tools.models.prompting import (
        decision_messages,
        reflection_messages,
        render_case,
    )
    from fakegang.tools.rules.player import play_rules

    lessons = [Reflection(i, task, f"t{i}", text, False, -1.0) for i, text in enumerate(LESSONS)]
    few_shot = Trajectory(
        task,
        "t9",
        1.8,
        0.9,
        ["INSPECT u_11aa22", "FLAG u_11aa22", "INVESTIGATE_NETWORK u_11aa22", "INSPECT u_33bb44"]
        + ["FLAG u_33bb44", "INSPECT u_55cc66", "FLAG u_55cc66", "SUBMIT"],
        "[WIN] TP=5 FP=0 FN=0 Recall=1.00 Precision=1.00 Episode reward=+1.80",
    )
    prompts: list[tuple[str, str, list[str]]] = []

    def collect(_episode, obs, _starting, proposal) -> None:
        if proposal.action.startswith("inspect"):
            case = render_case(obs, proposal.likelihood, proposal.frontier)
            system, user = decision_messages(lessons, few_shot, case, proposal.choices)
            prompts.append((system, user, list(proposal.choices)))

    for seed in range(10):
        play_rules(task, seed, collect)
        if len(prompts) >= n + 1:
            break
    prompts = prompts[: n + 1]
    reflection = reflection_messages(
        won=False,
        episode=7,
        task="easy",
        final_message="[LOSS] TP=3 FP=2 FN=2 Recall=0.60 Precision=0.60 Episode reward=-0.42",
        steps_used=30,
        max_steps=30,
        action_log=["INSPECT u_1a2b3c", "FLAG u_1a2b3c", "INSPECT u_44aa01", "SUBMIT"],
        modes={"agree": 3, "rule_override": 20, "llm": 7},
    )
    label = f"agent prompts, {task} inspect steps (the agent's prompting, 4 lessons + few-shot)"
    return prompts, reflection, label


def synthetic_prompts(n: int) -> tuple[list[tuple[str, str, list[str]]], tuple[str, str], str]:
    """Fallback when the agent's prompt builders are unavailable."""
    system = "You hunt a ring of fake accounts. Choose ONE action; answer with JSON."
    stable = "LESSONS\n" + "\n".join(LESSONS) + "\n\nCURRENT CASE\n"
    prompts = []
    for i in range(n + 1):
        choices = [f"inspect u_{i:06d}", f"flag u_{i + 1:06d}", "submit"]
        case = f"steps left {30 - i}/30\n  u_{i:06d} P=0.4 age=12d\nLast result: step {i}"
        prompts.append(
            (system, f"{stable}{case}\n\nChoose one action from: {' | '.join(choices)}", choices)
        )
    reflection = (system, "Case 7 was LOST. Steps used: 30 of 30. What should change?")
    return prompts, reflection, "synthetic prompts (agent builders unavailable)"


def _llama_of(model: Any) -> Any | None:
    try:
        from fakegang.tools.models.local_llm import LocalLlamaChatModel, get_llama
    except ImportError:
        return None
    if not isinstance(model, LocalLlamaChatModel):
        return None
    return get_llama(model.model_path, model.n_ctx, model.n_threads)


def _new_tokens(results: list[LLMCallResult], reused: list[int]) -> int:
    """Median prompt tokens evaluated afresh (not served from the KV cache) per call."""
    return int(_median([r.tokens_in - n for r, n in zip(results, reused, strict=True)]))


def _reused(llama: Any, call: Callable[[], LLMCallResult]) -> tuple[LLMCallResult, int]:
    """Run `call`; return its result and how many prompt tokens llama.cpp kept from before."""
    if llama is None:
        return call(), 0
    from fakegang.tools.models.local_llm import common_prefix_length

    before = list(llama._input_ids)
    result = call()
    return result, min(common_prefix_length(before, llama._input_ids), result.tokens_in)


def run(model_spec: str, calls: int, timeout_s: float, task: str = "hard") -> int:
    settings = ModelSettings(spec=model_spec, timeout_s=timeout_s, max_retries=0)
    load_before = os.getloadavg()[0]
    model, load_s = timed(make_chat_model, settings)
    llama = _llama_of(model)
    try:
        prompts, (r_system, r_user), source = episode_prompts(calls, task)
    except Exception as exc:  # noqa: BLE001 - fall back, and say so
        print(f"(agent prompt builders failed: {type(exc).__name__}: {exc})")
        prompts, (r_system, r_user), source = synthetic_prompts(calls)

    rows: list[tuple[str, list[LLMCallResult], list[int]]] = []

    def do_decide(p: tuple[str, str, list[str]]) -> LLMCallResult:
        system, user, choices = p
        return decide(model, system=system, user=user, choices=choices, settings=settings)

    if llama is not None:  # cold: the whole prompt evaluated every time
        cold, cold_reused = [], []
        for p in prompts[1:]:
            llama.reset()
            result, reused = _reused(llama, lambda p=p: do_decide(p))
            cold.append(result)
            cold_reused.append(reused)
        rows.append(("decision, cold prompt", cold, cold_reused))

    if llama is not None:
        llama.reset()
    do_decide(prompts[0])  # an episode's first step pays for the stable prefix once
    warm, warm_reused = [], []
    for p in prompts[1:]:
        result, reused = _reused(llama, lambda p=p: do_decide(p))
        warm.append(result)
        warm_reused.append(reused)
    rows.append(("decision, prefix reused", warm, warm_reused))

    refl, refl_reused = [], []
    for _ in range(calls):  # cold, as in a run: its prompt shares nothing with the decisions
        if llama is not None:
            llama.reset()
        result, reused = _reused(
            llama, lambda: reflect(model, system=r_system, user=r_user, settings=settings)
        )
        refl.append(result)
        refl_reused.append(reused)
    rows.append(("reflection, cold, <=120 tok", refl, refl_reused))

    print(f"LLM latency — {describe_model(settings)}")
    print(f"prompts: {source}; model load {load_s:.1f} s; {calls} calls per row; median values")
    print(
        f"machine: {os.cpu_count()} cores, 1-min load average {load_before:.2f} before / "
        f"{os.getloadavg()[0]:.2f} after (llama.cpp slows down sharply when cores are shared)"
    )
    header = (
        f"{'measurement':<28} {'ok':>5} {'median s':>9} {'min s':>7} {'max s':>7} "
        f"{'prompt tok':>10} {'reused tok':>10} {'new tok':>8} {'out tok':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, results, reused in rows:
        latencies = [r.latency_s for r in results]
        ok = sum(r.ok for r in results)
        approx = "~" if any(r.tokens_estimated for r in results) else ""
        print(
            f"{name:<28} {ok:>2}/{len(results):<2} {_median(latencies):>9.2f} "
            f"{min(latencies):>7.2f} {max(latencies):>7.2f} "
            f"{approx + str(int(_median([r.tokens_in for r in results]))):>10} "
            f"{int(_median(reused)) if llama is not None else 'n/a':>10} "
            f"{_new_tokens(results, reused) if llama is not None else 'n/a':>8} "
            f"{approx + str(int(_median([r.tokens_out for r in results]))):>8}"
        )
    failures = [r.error for _, results, _ in rows for r in results if not r.ok]
    if failures:
        print(f"failures: {len(failures)}; first: {failures[0]}")
    sample = warm[-1]
    print(f"last decision: {sample.value!r} — {sample.reason!r}")
    print(f"last reflection: {refl[-1].value!r}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--calls", type=int, default=5, help="calls per row (median of these)")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--task", choices=("easy", "medium", "hard"), default="hard")
    args = parser.parse_args(argv)
    try:
        return run(args.model, max(1, args.calls), args.timeout, args.task)
    except Exception as exc:  # noqa: BLE001 - a bench prints, it does not trace back
        print(f"bench failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
