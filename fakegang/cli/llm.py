"""`fakegang llm-check`: one decision and one reflection through the chosen chat model.

A quick way to see that a model works here (package, credentials, region, latency) before a
run depends on it.  Prompts come from the agent's real builders
(`fakegang.tools.models.prompting.sample_decision_messages` / `sample_reflection_messages`); if
those are unavailable a small built-in sample is used and the output says so.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from fakegang.cli.settings import MODEL_SETTINGS, add_setting_arguments, context_from_args
from fakegang.tools.models.chat_models import (
    ModelConfigError,
    ModelSettings,
    describe_model,
    make_chat_model,
)
from fakegang.tools.models.llm import LLMCallResult, decide, reflect

FALLBACK_SYSTEM = (
    "You are a trust-and-safety investigator hunting a ring of coordinated fake accounts. "
    'Choose exactly ONE action. Answer with JSON: {"action": "<action>", "reason": "<short>"}.'
)
FALLBACK_USER = (
    "CURRENT CASE\n"
    "TASK easy | steps left 24/30 | inspected 6 of 32 known\n"
    "Flagged (0): none yet\n"
    "  u_9cc38e P=0.62 age=12d hour=3.1 photo=0.71 bio=0.74 ip_shared=6 mutual=0.50\n"
    "  u_350156 P=0.04 age=910d hour=20.9 photo=0.07 bio=0.20 ip_shared=0 mutual=0.14\n"
    "Not yet inspected: u_ebf729 P=0.33, u_26735c P=0.13\n\n"
    "Choose one action from: flag u_9cc38e | flag u_350156 | inspect u_ebf729 | "
    "inspect u_26735c | submit"
)
FALLBACK_CHOICES = [
    "flag u_9cc38e",
    "flag u_350156",
    "inspect u_ebf729",
    "inspect u_26735c",
    "submit",
]
FALLBACK_REFLECT_SYSTEM = (
    "You review a finished fake-account ring investigation and write a 2-3 sentence lesson."
)
FALLBACK_REFLECT_USER = (
    "Case 7 (medium) was LOST.\n"
    "Result: [LOSS] TP=6 FP=3 FN=4 Recall=0.60 Precision=0.67 Episode reward=-1.42\n"
    "Steps used: 50 of 50.\nWhat should the investigator do differently next time?"
)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The model settings, as every command that calls a model names them."""
    add_setting_arguments(parser, MODEL_SETTINGS)
    parser.add_argument("--bedrock-endpoint-url", default=None, help=argparse.SUPPRESS)


def settings_from_args(args: argparse.Namespace) -> ModelSettings:
    settings = context_from_args(args).model_settings()
    return replace(settings, bedrock_endpoint_url=args.bedrock_endpoint_url)


def add_llm_commands(subparsers: Any) -> None:
    """Register `llm-check` on the top-level `fakegang` parser."""
    p = subparsers.add_parser(
        "llm-check",
        help="one decision and one reflection through a chat model, with latencies",
        description=__doc__,
    )
    add_model_arguments(p)
    p.set_defaults(func=run_llm_check)


def sample_prompts() -> tuple[str, str, list[str], str, str, str]:
    """(system, user, choices, reflect_system, reflect_user, source)."""
    try:
        from fakegang.tools.models.prompting import (
            sample_decision_messages,
            sample_reflection_messages,
        )

        system, user, choices = sample_decision_messages()
        r_system, r_user = sample_reflection_messages()
        return system, user, list(choices), r_system, r_user, "fakegang.tools.models.prompting"
    except Exception as exc:  # the agent's builders are missing or broken: still check the model
        source = f"built-in fallback sample ({type(exc).__name__}: {exc})"
        return (
            FALLBACK_SYSTEM,
            FALLBACK_USER,
            list(FALLBACK_CHOICES),
            FALLBACK_REFLECT_SYSTEM,
            FALLBACK_REFLECT_USER,
            source,
        )


def _stats(result: LLMCallResult) -> str:
    approx = "~" if result.tokens_estimated else ""
    return (
        f"{result.latency_s:.2f} s, tokens in {approx}{result.tokens_in} / out "
        f"{approx}{result.tokens_out}, attempts {result.attempts}"
        + (" (token counts estimated: no usage reported)" if result.tokens_estimated else "")
    )


def run_llm_check(args: argparse.Namespace, out: Any = None) -> int:
    """0 if both calls succeeded, 1 if one failed, 2 if the model cannot be built."""
    out = out or sys.stdout
    settings = settings_from_args(args)
    print(f"model      : {describe_model(settings)}", file=out)
    try:
        model = make_chat_model(settings)
    except ModelConfigError as exc:
        print(f"error      : {exc}", file=sys.stderr)
        return 2
    system, user, choices, r_system, r_user, source = sample_prompts()
    print(f"prompts    : {source}", file=out)
    print(f"choices    : {' | '.join(choices)}", file=out)

    decision = decide(model, system=system, user=user, choices=choices, settings=settings)
    if decision.ok:
        print(f"action     : {decision.value}", file=out)
        print(f"reason     : {decision.reason or '(none given)'}", file=out)
    else:
        print(f"action     : FAILED - {decision.error}", file=out)
    print(f"decide     : {_stats(decision)}", file=out)

    reflection = reflect(model, system=r_system, user=r_user, settings=settings)
    if reflection.ok:
        print(f"reflection : {reflection.value}", file=out)
    else:
        print(f"reflection : FAILED - {reflection.error}", file=out)
    print(f"reflect    : {_stats(reflection)}", file=out)
    return 0 if decision.ok and reflection.ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fakegang-llm-check", description=__doc__)
    add_model_arguments(parser)
    return run_llm_check(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
