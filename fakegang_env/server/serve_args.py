"""The flags of `fakegang env serve` (also `python -m fakegang_env.server.app`).

They live in the server package so that the server never imports the CLI; the CLI imports them
from here.
"""

from __future__ import annotations

import argparse

from fakegang_env.arguments import port_number, positive

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "add_serve_arguments"]

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
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
