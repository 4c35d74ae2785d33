"""Bearer-token auth for the environment server, and the rule for binding beyond loopback.

With a token configured (`fakegang env serve --token ...` or `$FAKEGANG_ENV_TOKEN`), every HTTP
route except `/health` and the `/ws` WebSocket need `Authorization: Bearer <token>`; anything
else gets a 401 JSON error (the WebSocket handshake is refused with a 403). Tokens are compared
with `hmac.compare_digest`, in time independent of where they differ.

A pure ASGI middleware rather than a FastAPI dependency: OpenEnv's `create_app` registers its own
routes (`/ws`, `/schema`, `/mcp`, ...) that we do not declare, and a middleware covers them all,
the WebSocket included, without editing the library's routes.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
from typing import Any

from fakegang_env.schema import TOKEN_ENV

OPEN_PATHS = frozenset({"/health"})
MIN_TOKEN_CHARS = 16
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class InsecureBindError(ValueError):
    """A non-loopback bind was asked for without a token and without `--insecure`."""


def token_from_env() -> str | None:
    """The token in `$FAKEGANG_ENV_TOKEN` (an empty value means none)."""
    return os.environ.get(TOKEN_ENV) or None


def check_token_strength(token: str) -> None:
    """Refuse tokens short enough to guess; `secrets.token_urlsafe(32)` makes a good one."""
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(
            f"the token must be at least {MIN_TOKEN_CHARS} characters (got {len(token)}); "
            "make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and names that resolve only to loopback addresses."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def check_bind(
    host: str,
    token: str | None,
    insecure: bool,
    *,
    what: str = "server",
    token_env: str = TOKEN_ENV,
) -> None:
    """Raise `InsecureBindError` when `host` is reachable from other machines and no token
    guards it, unless the operator said `--insecure`; the message names `token_env`."""
    if token or insecure or is_loopback(host):
        return
    raise InsecureBindError(
        f"refusing to bind the {what} to {host}: it would be reachable from other machines with "
        f"no token. Set one with --token or ${token_env}, bind 127.0.0.1, or pass --insecure "
        "if the network is trusted"
    )


def authorized(header_value: bytes | None, expected: bytes) -> bool:
    """Constant-time check of an `Authorization` header against `Bearer <expected>`."""
    if header_value is None:
        return False
    scheme, _, supplied = header_value.partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(supplied.strip(), expected)


class BearerTokenMiddleware:
    """Require `Authorization: Bearer <token>` on every HTTP and WebSocket request except
    `OPEN_PATHS`."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), None)
        if authorized(header, self.expected):
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # handshake answered with 403
            return
        message = (
            "missing Authorization header: this server needs 'Authorization: Bearer <token>'"
            if header is None
            else "wrong token or scheme: this server needs 'Authorization: Bearer <token>'"
        )
        payload = json.dumps({"error": "unauthorized", "message": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"www-authenticate", b'Bearer realm="fakegang_env"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
