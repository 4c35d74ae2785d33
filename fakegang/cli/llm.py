"""`fakegang llm-check`: one decision and one reflection through the chosen chat model.

A quick way to see that a model works here (package, credentials, region, latency) before a
run depends on it.  Prompts come from the agent's real builders
(`fakegang.tools.models.prompting.sample_decision_messages` / `sample_reflection_messages`), so
the check sees what a run sends; if those builders fail, the check fails (exit 2) and says why.
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


class PromptBuildError(RuntimeError):
    """The agent's prompt builders failed: the check cannot send what a run would."""


def sample_prompts() -> tuple[str, str, list[str], str, str]:
    """(system, user, choices, reflect_system, reflect_user) from the agent's prompt builders."""
    from fakegang.tools.models.prompting import (
        sample_decision_messages,
        sample_reflection_messages,
    )

    try:
        system, user, choices = sample_decision_messages()
        r_system, r_user = sample_reflection_messages()
    except Exception as exc:
        raise PromptBuildError(f"{type(exc).__name__}: {exc}") from exc
    return system, user, list(choices), r_system, r_user


def _stats(result: LLMCallResult) -> str:
    approx = "~" if result.tokens_estimated else ""
    return (
        f"{result.latency_s:.2f} s, tokens in {approx}{result.tokens_in} / out "
        f"{approx}{result.tokens_out}, attempts {result.attempts}"
        + (" (token counts estimated: no usage reported)" if result.tokens_estimated else "")
    )


def run_llm_check(args: argparse.Namespace, out: Any = None) -> int:
    """0 if both calls succeeded, 1 if one failed, 2 if the model or the prompts cannot be
    built."""
    out = out or sys.stdout
    settings = settings_from_args(args)
    print(f"model      : {describe_model(settings)}", file=out)
    try:
        model = make_chat_model(settings)
    except ModelConfigError as exc:
        print(f"error      : {exc}", file=sys.stderr)
        return 2
    try:
        system, user, choices, r_system, r_user = sample_prompts()
    except PromptBuildError as exc:
        print(f"error      : the agent's prompt builders failed ({exc})", file=sys.stderr)
        return 2
    print("prompts    : fakegang.tools.models.prompting", file=out)
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
