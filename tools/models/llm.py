"""The agent's two LLM calls, `decide` and `reflect`: bounded, retried, measured, never raising.

Why this shape: the graph asks the model only when the rule engine is unsure, and whatever goes
wrong (a provider error, a timeout, prose instead of JSON, a structured answer that comes back
`None` as Qwen3 on Bedrock does) must leave the episode running on the rule action.  So both
functions return an `LLMCallResult` and catch everything.

Split by job: timeouts and retries in tools/models/llm_retry.py, reading the answer (reasoning
stripped, decision parsed) in tools/models/llm_parse.py; this module runs the two calls and does the
accounting (latency, tokens). The model factory is tools/models/chat_models.py.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from fakegang.tools.models.chat_models import ModelSettings
from fakegang.tools.models.llm_parse import (
    REASON_MAX_CHARS,
    decision_schema,
    message_text,
    parse_decision,
)
from fakegang.tools.models.llm_retry import CallFailure, describe_error, error_class, with_retries
from fakegang.tools.models.model_kinds import find_kind

UNPARSEABLE = "unparseable output"

RAW_CHARS = 500


@dataclass
class LLMCallResult:
    """Outcome of one decide/reflect call (all attempts together)."""

    ok: bool
    value: str | None  # decide: the chosen action string (one of `choices`); reflect: the text
    reason: str = ""  # decide: the model's one-line reason
    error: str | None = None  # e.g. "timeout after 30.0s", "unparseable output: ..."
    error_class: str | None = None  # what the failure is counted under (llm_retry.error_class)
    timed_out: bool = False  # the call ran out of time (the graph stops asking, see nodes.py)
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 1
    raw: str = ""  # raw text (truncated to ~500 chars) for traces
    tokens_estimated: bool = False  # True when the provider reported no usage (chars / 4)
    # prompt tokens served from the model's KV cache (the local model reports it; None elsewhere)
    prompt_tokens_reused: int | None = None


# ---------------------------------------------------------------------------------------------
# accounting


def _raw_text(message: Any) -> str:
    if isinstance(message, AIMessage):
        text = message.text
        if not text.strip() and message.tool_calls:
            text = json.dumps([tc.get("args") for tc in message.tool_calls])
        return text[:RAW_CHARS]
    return str(message or "")[:RAW_CHARS]


def _fill_usage(result: LLMCallResult, message: Any, prompt_chars: int) -> None:
    usage = getattr(message, "usage_metadata", None)
    if usage:
        result.tokens_in = int(usage.get("input_tokens", 0))
        result.tokens_out = int(usage.get("output_tokens", 0))
        reused = (getattr(message, "response_metadata", None) or {}).get("prompt_tokens_reused")
        result.prompt_tokens_reused = int(reused) if reused is not None else None
    else:
        result.tokens_in = prompt_chars // 4
        result.tokens_out = len(_raw_text(message)) // 4 if message is not None else 0
        result.tokens_estimated = True


def _fail(result: LLMCallResult, failure: CallFailure) -> None:
    result.error, result.error_class = failure.text, failure.error_class
    result.timed_out = failure.timed_out


def _internal_error(exc: Exception) -> LLMCallResult:
    return LLMCallResult(
        ok=False,
        value=None,
        error=f"internal error: {describe_error(exc)}",
        error_class=error_class(exc),
    )


def _messages(system: str, user: str) -> list[BaseMessage]:
    return [SystemMessage(content=system), HumanMessage(content=user)]


# ---------------------------------------------------------------------------------------------
# the API


def _timed(fn: Callable[..., LLMCallResult]) -> Callable[..., LLMCallResult]:
    """Record the wall time of the whole call (all attempts and backoff) in `latency_s`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> LLMCallResult:
        start = time.monotonic()
        result = fn(*args, **kwargs)
        result.latency_s = round(time.monotonic() - start, 4)
        return result

    return wrapper


@_timed
def decide(
    model: BaseChatModel,
    *,
    system: str,
    user: str,
    choices: list[str],
    settings: ModelSettings,
) -> LLMCallResult:
    """Ask for exactly one of `choices`; ok=False with an error on any failure.  Never raises."""
    try:
        unique = list(dict.fromkeys(c.strip() for c in choices if isinstance(c, str) and c.strip()))
        if not unique:
            return LLMCallResult(
                ok=False, value=None, error="no choices given", error_class="no choices given"
            )
        schema = decision_schema(tuple(unique))
        messages = _messages(system, user)
        try:
            runnable = model.with_structured_output(schema, include_raw=True)
        except (NotImplementedError, ValueError, TypeError):
            runnable = None  # no structured output: parse the text

        def attempt() -> dict[str, Any]:
            if runnable is None:
                return {"raw": model.invoke(messages), "parsed": None, "parsing_error": None}
            return runnable.invoke(messages)

        output, attempts, failure = with_retries(attempt, settings)
        result = LLMCallResult(ok=False, value=None, attempts=attempts)
        prompt_chars = len(system) + len(user)
        if failure is not None:
            _fail(result, failure)
            result.tokens_in, result.tokens_estimated = prompt_chars // 4, True
            return result
        raw = output.get("raw") if isinstance(output, dict) else output
        parsed = output.get("parsed") if isinstance(output, dict) else None
        result.raw = _raw_text(raw)
        _fill_usage(result, raw, prompt_chars)
        action, reason = None, ""
        if isinstance(parsed, BaseModel):
            action, reason = getattr(parsed, "action", None), getattr(parsed, "reason", "")
            if action not in unique:
                action = None
        if action is None:  # None structured output (prose), validation error, no schema
            action, reason = parse_decision(raw, unique)
        if action is None:
            detail = output.get("parsing_error") if isinstance(output, dict) else None
            why = f" ({type(detail).__name__})" if detail else ""
            result.error = f"{UNPARSEABLE}{why}: {result.raw[:160]!r}"
            result.error_class = UNPARSEABLE
            return result
        result.ok, result.value = True, action
        result.reason = " ".join(str(reason or "").split())[:REASON_MAX_CHARS]
        return result
    except Exception as exc:  # noqa: BLE001 - the contract is: never raise
        return _internal_error(exc)


def _reflection_budget(
    model: BaseChatModel, max_tokens: int, settings: ModelSettings
) -> tuple[BaseChatModel | Any, int]:
    """(runnable, visible-token cap) by the spec's model kind (its `reflection_headroom`)."""
    kind = find_kind(settings.spec)
    if kind is None or kind.reflection_headroom is None:
        return model, max_tokens
    return model.bind(max_tokens=max_tokens + kind.reflection_headroom), max_tokens


def _truncate_tokens(text: str, max_tokens: int) -> str:
    """Cut to about `max_tokens` tokens (4 characters each) at a word boundary."""
    limit = max_tokens * 4
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip() + " ..."


@_timed
def reflect(
    model: BaseChatModel,
    *,
    system: str,
    user: str,
    settings: ModelSettings,
    max_tokens: int = 120,
) -> LLMCallResult:
    """Free-text reflection with a token cap, reasoning stripped.  Never raises."""
    try:
        runnable, cap = _reflection_budget(model, max(1, int(max_tokens)), settings)
        messages = _messages(system, user)
        message, attempts, failure = with_retries(lambda: runnable.invoke(messages), settings)
        result = LLMCallResult(ok=False, value=None, attempts=attempts)
        prompt_chars = len(system) + len(user)
        if failure is not None:
            _fail(result, failure)
            result.tokens_in, result.tokens_estimated = prompt_chars // 4, True
            return result
        result.raw = _raw_text(message)
        _fill_usage(result, message, prompt_chars)
        text = _truncate_tokens(" ".join(message_text(message).split()), cap)
        if not text:
            result.error = f"empty reflection (raw: {result.raw[:120]!r})"
            result.error_class = "empty reflection"
            return result
        result.ok, result.value = True, text
        return result
    except Exception as exc:  # noqa: BLE001 - the contract is: never raise
        return _internal_error(exc)
