"""The viewer's guards against browsers (shared machinery in
fakegang_env/server/security.py).

* Its Host allow-list (loopback names, the bound host, `$FAKEGANG_ALLOWED_HOSTS`): a page whose
  name is re-pointed at 127.0.0.1 cannot read the viewer (DNS rebinding).
* Its Content-Security-Policy, nosniff and no-referrer on every response, the token
  middleware's 401 and 303 and the 500 of Starlette's outermost error middleware included.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakegang_env.server.security import install

#: What the viewer's pages may load: this app's own files, nothing else.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)
VIEW_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def install_view_security(app: Any, *, hosts: Iterable[str] | None) -> None:
    """Wrap the viewer app; `hosts` None (an in-process test client) checks no Host. The viewer
    only serves GETs, so there is no body type to check."""
    install(app, hosts=hosts, headers=VIEW_HEADERS, json_only=False)
