"""Readable JSON errors for every bad request, a body-size limit, and a last-resort 500 handler.

Every error body has `error` (a short code) and `message` (a sentence for a person); validation
errors also carry `detail`, the per-field list in FastAPI's usual shape, so generic clients that
read `detail` keep working.
"""

from __future__ import annotations

import json
import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

logger = logging.getLogger("fakegang_env.server")

DEFAULT_MAX_BODY_BYTES = 64 * 1024
_MAX_INPUT_ECHO = 200  # characters of a bad input echoed back in `detail`
_FASTAPI_PARSE_ERROR = "There was an error parsing the body"


class ApiError(Exception):
    """An expected failure with an HTTP status, a short code and a human message."""

    def __init__(self, status: int, error: str, message: str, **extra: Any):
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.extra = extra


def error_response(status: int, error: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": error, "message": message, **extra}, status_code=status)


def _echo(value: Any) -> Any:
    """A bad input made JSON-safe (NaN and infinities included) and shortened, so an error
    never fails to encode and never echoes 64 KiB back."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)[:_MAX_INPUT_ECHO]
    return value if len(text) <= _MAX_INPUT_ECHO else text[:_MAX_INPUT_ECHO] + "..."


def _where(loc: tuple | list) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) if parts else "body"


def _sentence(err: dict[str, Any]) -> str:
    where = _where(err.get("loc", ()))
    if err.get("type") == "missing" and where == "body":
        return "a JSON object body is required"
    msg = str(err.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    return f"{where}: {msg}"


def validation_error_body(errors: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    """(status, body) for pydantic/FastAPI errors: 400 for malformed JSON, else 422."""
    detail = [
        {
            "type": err.get("type"),
            "loc": list(err.get("loc", ())),
            "msg": err.get("msg"),
            "input": _echo(err.get("input")),
        }
        for err in errors
    ]
    bad_json = [e for e in errors if e.get("type") == "json_invalid"]
    if bad_json:
        ctx = bad_json[0].get("ctx") or {}
        where = bad_json[0].get("loc", ())
        pos = f" (at character {where[-1]})" if where and isinstance(where[-1], int) else ""
        reason = ctx.get("error", "invalid JSON")
        message = f"malformed JSON body: {reason}{pos}"
        return 400, {"error": "malformed_json", "message": message, "detail": detail}
    summary = "; ".join(_sentence(e) for e in errors)
    return 422, {
        "error": "invalid_request",
        "message": f"invalid request: {summary}",
        "detail": detail,
    }


async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.error, exc.message, **exc.extra)


async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
    status, body = validation_error_body(list(exc.errors()))
    return JSONResponse(body, status_code=status)


async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    detail = exc.detail
    if exc.status_code == 400 and detail == _FASTAPI_PARSE_ERROR:
        # FastAPI's answer when json.loads fails with something other than a syntax error
        # (nesting too deep, an integer with thousands of digits, ...).
        return error_response(
            400,
            "malformed_json",
            "could not parse the request body as JSON (invalid, nested too deeply, or a number "
            "too large)",
            detail=detail,
        )
    try:
        code = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_").replace("-", "_")
    except ValueError:
        code = "http_error"
    message = detail if isinstance(detail, str) else f"HTTP {exc.status_code}"
    return JSONResponse(
        {"error": code, "message": message, "detail": detail},
        status_code=exc.status_code,
        headers=getattr(exc, "headers", None),
    )


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    """Only genuine server bugs reach this: log the traceback, answer with JSON, not text."""
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(
        500,
        "internal_error",
        f"internal server error ({type(exc).__name__}); this is a bug in the server, see its log",
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)


class BodySizeLimitMiddleware:
    """Pure ASGI middleware: requests with a body over `max_bytes` get a 413 JSON error.

    A declared Content-Length is checked before anything is read; a chunked body is buffered up
    to the limit and replayed to the app. WebSocket traffic passes through untouched (its frame
    size is limited by the server's `ws_max_size`).
    """

    def __init__(self, app: Any, max_bytes: int = DEFAULT_MAX_BODY_BYTES):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                declared = value
                break
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await self._reject(
                    send, 400, "bad_content_length", "the Content-Length header is not an integer"
                )
                return
            if size > self.max_bytes:
                await self._too_large(send)
                return
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            total += len(body)
            if total > self.max_bytes:
                await self._too_large(send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Any) -> None:
        await self._reject(
            send,
            413,
            "body_too_large",
            f"request body is larger than the server's limit of {self.max_bytes} bytes",
        )

    @staticmethod
    async def _reject(send: Any, status: int, error: str, message: str) -> None:
        payload = json.dumps({"error": error, "message": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
