"""The viewer's token, for when it is bound beyond loopback (same rule as `fakegang env serve`).

The bind rule and the token's strength are the environment server's (fakegang_env/server/auth.py
`check_bind`, `check_token_strength`). A browser cannot send a bearer header on a link, so besides
`Authorization: Bearer <token>` the viewer accepts the token once as `?token=...`: it answers
with an HttpOnly, SameSite=Strict cookie holding it and a redirect to the same page without the
query, so the token does not stay in the address bar or the history. Every comparison runs in
constant time.
"""

from __future__ import annotations

import hmac
import json
import os
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fakegang_env.server.auth import authorized

#: Where `fakegang view` reads its token when `--token` is not given.
VIEW_TOKEN_ENV = "FAKEGANG_VIEW_TOKEN"
COOKIE = "fakegang_view_token"


def token_from_env() -> str | None:
    return os.environ.get(VIEW_TOKEN_ENV) or None


class ViewTokenMiddleware:
    """Require the token (header, cookie, or once in the query) on every HTTP request."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = token.encode()

    def _same(self, supplied: str | None) -> bool:
        return supplied is not None and hmac.compare_digest(supplied.encode(), self.expected)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        cookie = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
        from_cookie = cookie[COOKIE].value if COOKIE in cookie else None
        if authorized(headers.get(b"authorization"), self.expected) or self._same(from_cookie):
            await self.app(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        supplied = next((v for k, v in query if k == "token"), None)
        if self._same(supplied):
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            location = scope.get("path", "/") + (f"?{rest}" if rest else "")
            await _send(
                send,
                303,
                b"",
                [
                    (b"location", location.encode()),
                    (
                        b"set-cookie",
                        f"{COOKIE}={supplied}; HttpOnly; SameSite=Strict; Path=/".encode(),
                    ),
                ],
            )
            return
        message = "this viewer needs its token: open it once as /?token=<token>"
        body = json.dumps({"error": "unauthorized", "message": message}).encode()
        await _send(send, 401, body, [(b"content-type", b"application/json")])


async def _send(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
