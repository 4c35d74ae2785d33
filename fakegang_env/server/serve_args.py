"""The flags of `fakegang env serve` (also `python -m fakegang_env.server.app`).

They live in the server package so that the server never imports the CLI; the CLI imports them
from here.
"""

from __future__ import annotations

import argparse
import socket

from fakegang_env.arguments import port_number, positive

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "add_serve_arguments", "port_free"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `fakegang env serve`, shared with `python -m fakegang_env.server.app`."""
    parser.add_argument("--host", default=DEFAULT_HOST, help="bind address (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=DEFAULT_PORT, help="port (default 8000)"
    )
    parser.add_argument(
        "--max-episodes",
        type=positive(int),
        default=None,
        help="cap on episodes held for HTTP clients (default 256, or $FAKEGANG_MAX_EPISODES)",
    )
    parser.add_argument(
        "--episode-ttl",
        type=positive(float),
        default=None,
        help="seconds before an idle HTTP episode expires (default 1800, or "
        "$FAKEGANG_EPISODE_TTL_S)",
    )
    parser.add_argument(
        "--token",
        default=None,
        help="require 'Authorization: Bearer TOKEN' on every route but /health (prefer "
        "$FAKEGANG_ENV_TOKEN: a flag shows in the process list)",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow binding a non-loopback --host without a token (trusted networks only)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )


def port_free(port: int, host: str = DEFAULT_HOST) -> bool:
    """Whether `host:port` can be bound now (checked before a server starts, so a busy port is
    one clear line instead of the server's own error and traceback; also `fakegang studio`)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True
