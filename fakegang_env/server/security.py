"""What keeps a web page in the user's browser from driving a local server (this one and the
viewer), and tokens out of the logs.

* **Host allow-list** (Starlette's `TrustedHostMiddleware`, 400 otherwise): loopback names by
  default, plus the bound host and names given in `$FAKEGANG_ALLOWED_HOSTS`. A page on
  `evil.example` whose name the attacker re-points to 127.0.0.1 (DNS rebinding) sends
  `Host: evil.example` and is refused, redirects included.
* **JSON only on state-changing requests** (415 otherwise): a cross-origin "simple" request
  (`text/plain`, form or multipart, no preflight) can reach a server but cannot carry
  `Content-Type: application/json`, so it never reaches `/reset` or `/step`.
* **Security headers on every response**, errors included: the wrapper goes around Starlette's
  whole middleware stack (`ServerErrorMiddleware`'s 500 too), not inside it.
* **Tokens never in logs**: uvicorn's access log line has the query string; `?token=` is
  redacted by a logging filter.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import Match

#: Names a loopback server answers to without configuration.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
#: Extra names (comma-separated) a server answers to, e.g. behind a proxy or in a container.
ALLOWED_HOSTS_ENV = "FAKEGANG_ALLOWED_HOSTS"
#: Headers of every response of the environment server (JSON API; /docs loads its own scripts).
API_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
}
_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_TOKEN_IN_QUERY = re.compile(r"(?i)([?&]token=)[^&\s\"]*")


def allowed_hosts(
    bound: str | None = None, extra: Iterable[str] = (), *, env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Loopback names, the bound host (unless a wildcard address), `extra` and the names in
    `$FAKEGANG_ALLOWED_HOSTS`; `*` there switches the check off (a trusted network)."""
    env = os.environ if env is None else env
    names = list(LOOPBACK_HOSTS)
    if bound in ("0.0.0.0", "::"):  # every interface: the machine's own names and addresses
        names.extend(_machine_names())
    elif bound:
        names.append(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    names.extend(extra)
    names.extend(n.strip() for n in env.get(ALLOWED_HOSTS_ENV, "").split(",") if n.strip())
    return tuple(dict.fromkeys(names))


def _machine_names() -> list[str]:
    """This machine's host name, full name and addresses (what a client elsewhere may use)."""
    import socket

    names = [socket.gethostname(), socket.getfqdn()]
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None)
    except OSError:
        infos = []
    for info in infos:
        address = str(info[4][0])
        names.append(f"[{address}]" if ":" in address else address)
    return names


class JsonOnlyMiddleware:
    """415 (JSON error body) for a state-changing HTTP request to one of `routes` whose body is
    not declared `application/json`, before the route or the body-size limit reads anything.
    A request no route takes with its method is left to routing (404, 405). A POST without a
    body is refused too: `/reset` would start an episode on defaults for any page."""

    def __init__(self, app: Any, routes: Iterable[Any] = ()) -> None:
        self.app = app
        self.routes = routes

    def _routed(self, scope: dict) -> bool:
        return any(route.matches(scope)[0] is Match.FULL for route in self.routes)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] in _STATE_CHANGING and self._routed(scope):
            raw = dict(scope.get("headers", ())).get(b"content-type", b"")
            media = raw.decode("latin-1").split(";", 1)[0].strip().lower()
            if media != "application/json":
                shown = media or "none"
                message = (
                    f"send the body as Content-Type: application/json (got {shown}); other "
                    "types are refused so that no cross-origin form can reach this route"
                )
                body = json.dumps({"error": "unsupported_media_type", "message": message})
                await _send(send, 415, body.encode(), b"application/json")
                return
        await self.app(scope, receive, send)


class SecurityHeadersMiddleware:
    """Add `headers` to every HTTP response that does not set them itself."""

    def __init__(self, app: Any, headers: Mapping[str, str]) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", ())}
                extra = [(k, v) for k, v in self.headers if k not in have]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


def install(
    app: Any,
    *,
    hosts: Iterable[str] | None,
    headers: Mapping[str, str],
    json_only: bool = True,
) -> None:
    """Wrap `app`'s whole middleware stack (built lazily by Starlette) in the checks above, so
    they also cover the responses Starlette's outermost error middleware makes. `hosts` None:
    no Host check (an app served in-process, e.g. a test client)."""
    build = app.build_middleware_stack

    def build_guarded() -> Any:
        inner = build()
        if json_only:
            inner = JsonOnlyMiddleware(inner, app.router.routes)
        if hosts is not None:
            inner = TrustedHostMiddleware(inner, allowed_hosts=list(hosts), www_redirect=False)
        return SecurityHeadersMiddleware(inner, headers)

    app.build_middleware_stack = build_guarded
    app.middleware_stack = None  # rebuilt on the next request


class RedactTokens(logging.Filter):
    """Replace `token=...` in a log record's arguments and message by `token=***`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                _TOKEN_IN_QUERY.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args
            )
        if isinstance(record.msg, str):
            record.msg = _TOKEN_IN_QUERY.sub(r"\1***", record.msg)
        return True


def uvicorn_log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration with `RedactTokens` on both of its handlers."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_tokens"] = {"()": RedactTokens}
    for handler in config.get("handlers", {}).values():
        handler.setdefault("filters", []).append("redact_tokens")
    return config


async def _send(send: Any, status: int, body: bytes, content_type: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
