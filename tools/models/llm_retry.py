"""Timeouts and retries of one chat-model call (tools/models/llm.py), which never raise.

Each attempt runs in a daemon worker thread and the caller waits at most `settings.timeout_s`
for it.  A timed-out call cannot be killed: an HTTP request ends at the client's read timeout
(set to the same value for Bedrock), but an in-process llama.cpp call keeps the CPU until it
finishes.  The local wrapper therefore caps `max_tokens` and stops generating at its own deadline
(only the prompt evaluation itself is uninterruptible); the next call waits for the model lock.
Retries (exponential backoff from `settings.retry_backoff_s`, at most `settings.max_retries`)
happen only for throttling, HTTP 429/5xx and timeouts, except that an in-process model that
timed out is not asked again: its call still holds the CPU (and the model lock) until its own
deadline, so a retry would only wait behind it, and a machine too busy for one call is too busy
for the next (a remote provider's timeout may be a passing network hiccup, so it is retried).

Every failure is a `CallFailure`: the text recorded with the call and the class it is counted
under in the end-of-run summary (the exception's class name, or `timeout`).
"""

from __future__ import annotations

import contextvars
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from fakegang.tools.models.model_settings import ModelSettings

__all__ = ["THROTTLE_CODES", "CallFailure", "describe_error", "retry_label", "with_retries"]

#: The class a timed-out call is counted under (ours, the local model's deadline, sockets').
TIMEOUT_CLASS = "timeout"


@dataclass(frozen=True)
class CallFailure:
    """Why a call gave no answer: `text` as recorded, `error_class` as counted."""

    text: str
    error_class: str
    timed_out: bool = False

    @classmethod
    def of(cls, exc: BaseException, text: str | None = None) -> CallFailure:
        return cls(text or describe_error(exc), error_class(exc), isinstance(exc, TimeoutError))


def error_class(exc: BaseException) -> str:
    """What a failure is counted under: `timeout`, a provider's error code (botocore's
    ClientError carries e.g. ThrottlingException), else the exception's class name."""
    if isinstance(exc, TimeoutError):
        return TIMEOUT_CLASS
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        if code:
            return str(code)
    return type(exc).__name__


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


class _CallTimeout(TimeoutError):
    pass


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


def describe_error(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {text[:240]}" if text else type(exc).__name__


def with_retries(
    fn: Callable[[], Any], settings: ModelSettings
) -> tuple[Any, int, CallFailure | None]:
    """(result, attempts, failure); `failure` is None on success.  Never raises."""
    attempts = 0
    last: CallFailure | None = None
    while True:
        attempts += 1
        try:
            return _call_with_timeout(fn, settings.timeout_s), attempts, None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a result
            label = retry_label(exc)
            if label is None:
                return None, attempts, CallFailure.of(exc)
            last = CallFailure.of(exc, label)
            if last.timed_out and settings.in_process:
                return None, attempts, last  # not retried (see the module docstring)
        if attempts > settings.max_retries:
            suffix = f" x{attempts}" if attempts > 1 else ""
            failure = CallFailure(f"{last.text}{suffix}", last.error_class, last.timed_out)
            return None, attempts, failure
        delay = settings.retry_backoff_s * (2 ** (attempts - 1))
        time.sleep(delay * (1.0 + 0.25 * random.random()))
