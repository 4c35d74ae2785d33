"""The agent's two LLM calls, `decide` and `reflect`: bounded, retried, measured, never raising.

Why this shape: the graph asks the model only when the rule engine is unsure, and whatever goes
wrong (a provider error, a timeout, prose instead of JSON, a structured answer that comes back
`None` as Qwen3 on Bedrock does) must leave the episode running on the rule action.  So both
functions return an `LLMCallResult` and catch everything.

Timeouts: each attempt runs in a daemon worker thread and the caller waits at most
`settings.timeout_s` for it.  A timed-out call cannot be killed: an HTTP request ends at the
client's read timeout (set to the same value for Bedrock), but an in-process llama.cpp call keeps
the CPU until it finishes.  The local wrapper therefore caps `max_tokens` and stops generating at
its own deadline (only the prompt evaluation itself is uninterruptible); the next call waits for
the model lock.  Retries (exponential backoff from `settings.retry_backoff_s`, at most
`settings.max_retries`) happen only for throttling, HTTP 429/5xx and timeouts.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import random
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model

from fakegang.tools.chat_models import ModelSettings

RAW_CHARS = 500
REASON_MAX_CHARS = 200
# Reasoning models (Qwen3 on Bedrock) think before answering; a reflection capped at 120 tokens
# would be all thinking.  They get this much extra budget and the visible text is truncated.
REASONING_HEADROOM_TOKENS = 512
THROTTLE_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "ServiceUnavailable",
        "InternalServerException",
        "InternalFailure",
        "ModelNotReadyException",
        "RequestLimitExceeded",
        "SlowDown",
    }
)
_THINK_RE = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


@dataclass
class LLMCallResult:
    """Outcome of one decide/reflect call (all attempts together)."""

    ok: bool
    value: str | None  # decide: the chosen action string (one of `choices`); reflect: the text
    reason: str = ""  # decide: the model's one-line reason
    error: str | None = None  # e.g. "timeout after 30.0s", "unparseable output: ..."
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 1
    raw: str = ""  # raw text (truncated to ~500 chars) for traces
    tokens_estimated: bool = False  # True when the provider reported no usage (chars / 4)
    # prompt tokens served from the model's KV cache (the local model reports it; None elsewhere)
    prompt_tokens_reused: int | None = None


class _CallTimeout(TimeoutError):
    pass


# ---------------------------------------------------------------------------------------------
# timeouts and retries


def _call_with_timeout(fn: Callable[[], Any], timeout_s: float) -> Any:
    """Run `fn` in a daemon thread; raise `_CallTimeout` if it takes longer than `timeout_s`."""
    future: Future = Future()
    context = contextvars.copy_context()  # keep LangChain callbacks / tracing context

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(context.run(fn))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True, name="fakegang-llm-call").start()
    try:
        return future.result(timeout=timeout_s)
    except TimeoutError as exc:
        if future.done():  # fn itself raised a TimeoutError
            raise
        raise _CallTimeout(f"timeout after {timeout_s:.1f}s") from exc


def _status_code(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):  # botocore ClientError
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return int(status) if status else None
    for holder in (exc, response):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def retry_label(exc: BaseException) -> str | None:
    """A short label if `exc` is worth retrying (throttling, 429/5xx, timeout), else None."""
    if isinstance(exc, TimeoutError):  # ours, the local model's deadline, socket timeouts
        return str(exc) or type(exc).__name__
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code", "")
        if code in THROTTLE_CODES:
            return code
    status = _status_code(exc)
    if status is not None and (status == 429 or status >= 500):
        name = type(exc).__name__
        code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
        return f"{code or name} (HTTP {status})"
    name = type(exc).__name__
    if any(word in name for word in ("Throttl", "RateLimit", "Timeout")):
        return name
    return None


def _describe_error(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {text[:240]}" if text else type(exc).__name__


def _with_retries(fn: Callable[[], Any], settings: ModelSettings) -> tuple[Any, int, str | None]:
    """(result, attempts, error); `error` is None on success.  Never raises."""
    attempts = 0
    last_label = ""
    while True:
        attempts += 1
        try:
            return _call_with_timeout(fn, settings.timeout_s), attempts, None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a result
            label = retry_label(exc)
            if label is None:
                return None, attempts, _describe_error(exc)
            last_label = label
        if attempts > settings.max_retries:
            suffix = f" x{attempts}" if attempts > 1 else ""
            return None, attempts, f"{last_label}{suffix}"
        delay = settings.retry_backoff_s * (2 ** (attempts - 1))
        time.sleep(delay * (1.0 + 0.25 * random.random()))


# ---------------------------------------------------------------------------------------------
# parsing


def strip_reasoning(text: str) -> str:
    """Drop <think>...</think> blocks (an unclosed one runs to the end of the text)."""
    return _THINK_RE.sub("", text or "").strip()


def message_text(message: Any) -> str:
    """Visible answer text: text blocks only (reasoning blocks excluded), thinking stripped."""
    if isinstance(message, BaseMessage):
        return strip_reasoning(message.text)
    return strip_reasoning(str(message or ""))


def _norm(text: str) -> str:
    return " ".join(str(text).lower().strip().strip("\"'`.,;:!").split())


@functools.lru_cache(maxsize=256)
def decision_schema(choices: tuple[str, ...]) -> type[BaseModel]:
    """Pydantic model {action: Literal[choices], reason: str<=200} (cached per choice set)."""
    action_type = Literal.__getitem__(choices)
    return create_model(
        "Decision",
        __doc__="The next action to take and a one-line reason.",
        action=(action_type, Field(description="exactly one of the allowed actions")),
        reason=(str, Field(max_length=REASON_MAX_CHARS, description="one short line")),
    )


def _action_from_obj(obj: Any, by_norm: dict[str, str]) -> str | None:
    if not isinstance(obj, dict):
        return None
    action = obj.get("action")
    if not isinstance(action, str):
        return None
    found = by_norm.get(_norm(action))
    if found:
        return found
    # {"action": "flag", "id": "u_1"} style answers
    for key in ("id", "account_id", "target", "user_id", "target_id"):
        if isinstance(obj.get(key), str):
            found = by_norm.get(_norm(f"{action} {obj[key]}"))
            if found:
                return found
    return None


def _json_objects(text: str) -> list[Any]:
    objs = []
    with contextlib.suppress(ValueError):
        objs.append(json.loads(text))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        with contextlib.suppress(ValueError):
            objs.append(json.loads(text[start : end + 1]))
    return objs


_REASON_RE = re.compile(r'"reason"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)
_ACTION_RE = re.compile(r'"action"\s*:\s*"([^"]*)"')


def parse_decision(message: Any, choices: list[str]) -> tuple[str | None, str]:
    """Fallback parse of an answer that structured output did not parse: tool-call args, a JSON
    object in the text, the `"action": "..."` field of a JSON answer cut off by the token cap, or
    a visible answer that is exactly one choice. A choice merely *mentioned* in prose is never
    taken for the answer (the seed's parser submitted whenever "SUBMIT" appeared in reasoning).
    """
    by_norm = {_norm(c): c for c in choices}
    candidates: list[Any] = [tc.get("args") for tc in getattr(message, "tool_calls", None) or []]
    text = message_text(message)
    candidates.extend(_json_objects(text))
    for obj in candidates:
        action = _action_from_obj(obj, by_norm)
        if action:
            reason = obj.get("reason", "") if isinstance(obj.get("reason"), str) else ""
            return action, reason[:REASON_MAX_CHARS]
    field = _ACTION_RE.search(text)
    if field and _norm(field.group(1)) in by_norm:
        match = _REASON_RE.search(text)
        return by_norm[_norm(field.group(1))], (match.group(1) if match else "")[:REASON_MAX_CHARS]
    whole = by_norm.get(_norm(text))
    if whole:
        return whole, ""
    return None, ""


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
            return LLMCallResult(ok=False, value=None, error="no choices given")
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

        output, attempts, error = _with_retries(attempt, settings)
        result = LLMCallResult(ok=False, value=None, attempts=attempts)
        prompt_chars = len(system) + len(user)
        if error is not None:
            result.error = error
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
            result.error = f"unparseable output{why}: {result.raw[:160]!r}"
            return result
        result.ok, result.value = True, action
        result.reason = " ".join(str(reason or "").split())[:REASON_MAX_CHARS]
        return result
    except Exception as exc:  # noqa: BLE001 - the contract is: never raise
        return LLMCallResult(ok=False, value=None, error=f"internal error: {_describe_error(exc)}")


def _reflection_budget(model: BaseChatModel, max_tokens: int) -> tuple[BaseChatModel | Any, int]:
    """(runnable, visible-token cap): our models honour max_tokens exactly; Bedrock gets
    reasoning headroom; other providers are called as built and their text is truncated."""
    from fakegang.tools.fake_llm import FakeChatModel

    local_cls = _local_model_class()
    if isinstance(model, FakeChatModel) or (local_cls and isinstance(model, local_cls)):
        return model.bind(max_tokens=max_tokens), max_tokens
    if type(model).__name__ == "ChatBedrockConverse":
        return model.bind(max_tokens=max_tokens + REASONING_HEADROOM_TOKENS), max_tokens
    return model, max_tokens


def _local_model_class() -> type | None:
    try:
        from fakegang.tools.local_llm import LocalLlamaChatModel
    except ImportError:
        return None
    return LocalLlamaChatModel


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
        runnable, cap = _reflection_budget(model, max(1, int(max_tokens)))
        messages = _messages(system, user)
        message, attempts, error = _with_retries(lambda: runnable.invoke(messages), settings)
        result = LLMCallResult(ok=False, value=None, attempts=attempts)
        prompt_chars = len(system) + len(user)
        if error is not None:
            result.error = error
            result.tokens_in, result.tokens_estimated = prompt_chars // 4, True
            return result
        result.raw = _raw_text(message)
        _fill_usage(result, message, prompt_chars)
        text = _truncate_tokens(" ".join(message_text(message).split()), cap)
        if not text:
            result.error = f"empty reflection (raw: {result.raw[:120]!r})"
            return result
        result.ok, result.value = True, text
        return result
    except Exception as exc:  # noqa: BLE001 - the contract is: never raise
        return LLMCallResult(ok=False, value=None, error=f"internal error: {_describe_error(exc)}")
