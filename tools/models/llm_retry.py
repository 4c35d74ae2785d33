"""Timeouts and retries of one chat-model call (tools/models/llm.py), which never raise.

Each attempt runs in a daemon worker thread and the caller waits at most `settings.timeout_s`
for it.  A timed-out call cannot be killed: an HTTP request ends at the client's read timeout
(set to the same value for Bedrock), but an in-process llama.cpp call keeps the CPU until it
finishes.  The local wrapper therefore caps `max_tokens` and stops generating at its own deadline
(only the prompt evaluation itself is uninterruptible); the next call waits for the model lock.
Retries (exponential backoff from `settings.retry_backoff_s`, at most `settings.max_retries`)
happen only for throttling, HTTP 429/5xx and timeouts.
"""

from __future__ import annotations

import contextvars
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from fakegang.tools.models.model_settings import ModelSettings

__all__ = ["THROTTLE_CODES", "describe_error", "retry_label", "with_retries"]

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


def with_retries(fn: Callable[[], Any], settings: ModelSettings) -> tuple[Any, int, str | None]:
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
                return None, attempts, describe_error(exc)
            last_label = label
        if attempts > settings.max_retries:
            suffix = f" x{attempts}" if attempts > 1 else ""
            return None, attempts, f"{last_label}{suffix}"
        delay = settings.retry_backoff_s * (2 ** (attempts - 1))
        time.sleep(delay * (1.0 + 0.25 * random.random()))
