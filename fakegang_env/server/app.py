"""The FastAPI app: OpenEnv's `create_app` plus our stateful HTTP episode routes.

* `/ws` (and `/health`, `/metadata`, `/schema`, `/mcp`) come from OpenEnv unchanged: each
  WebSocket connection gets its own `FakeGangEnvironment`, up to `max_ws_sessions` at once, so
  OpenEnv clients (`FakeGangEnv`, `GenericEnvClient`) work as with any OpenEnv environment.
* OpenEnv's `/reset`, `/step`, `/state` are stateless per request, so they are removed and
  replaced by the registry-backed routes of `routes.py` (same wire shapes; see its docstring).
* Every bad request gets a 4xx JSON body (`errors.py`), bodies over 64 KiB get 413, and an
  unexpected exception becomes a JSON 500 instead of plain text.
* With a token (`auth.py`) every route but `/health` needs `Authorization: Bearer <token>`.
* Only loopback names (plus the bound host and `$FAKEGANG_ALLOWED_HOSTS`) in `Host`, only JSON
  bodies on POST, security headers on every response (`security.py`).
* `/openapi.json` documents every status each route can answer (`contract.py`).

Settings come from environment variables (`FAKEGANG_EPISODE_TTL_S`, `FAKEGANG_MAX_EPISODES`,
`FAKEGANG_MAX_BODY_BYTES`, `FAKEGANG_MAX_WS_SESSIONS`, `FAKEGANG_ENV_TOKEN`) or `main()`'s
flags.
Run: `python -m fakegang_env.server.app [--host 127.0.0.1] [--port 8000]`.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field, replace

from fastapi import FastAPI
from fastapi.routing import APIRoute
from openenv.core.env_server.http_server import create_app

from fakegang_env.models import FakeGangAction, FakeGangObservation, FakeGangState
from fakegang_env.server.auth import (
    BearerTokenMiddleware,
    InsecureBindError,
    check_bind,
    check_token_strength,
    token_from_env,
)
from fakegang_env.server.contract import install_contract
from fakegang_env.server.errors import (
    DEFAULT_MAX_BODY_BYTES,
    BodySizeLimitMiddleware,
    install_error_handlers,
)
from fakegang_env.server.fakegang_environment import ENV_NAME, ENV_VERSION, FakeGangEnvironment
from fakegang_env.server.rounds import new_episode
from fakegang_env.server.routes import register_http_routes
from fakegang_env.server.security import (
    API_HEADERS,
    allowed_hosts,
    uvicorn_log_config,
)
from fakegang_env.server.security import install as install_security
from fakegang_env.server.serve_args import add_serve_arguments, port_free
from fakegang_env.server.sessions import DEFAULT_MAX_EPISODES, DEFAULT_TTL_S, EpisodeRegistry
from fakegang_env.server.ws_guard import WsFrameGuard

DEFAULT_MAX_WS_SESSIONS = 64
_STATELESS_STOCK_ROUTES = frozenset({"/reset", "/step", "/state"})
_HOT_ROUTES = frozenset({"/step", "/state", "/reset"})


@dataclass(frozen=True)
class ServerSettings:
    ttl_s: float = DEFAULT_TTL_S
    max_episodes: int = DEFAULT_MAX_EPISODES
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_ws_sessions: int = DEFAULT_MAX_WS_SESSIONS
    token: str | None = field(default=None, repr=False)
    #: Host header values served (security.py). `from_env()` and `serve()` (every app that
    #: listens on a socket) fill it; None, the bare default, is for an app driven in-process
    #: (a test client), which no browser can reach.
    allowed_hosts: tuple[str, ...] | None = None

    @classmethod
    def from_env(cls) -> ServerSettings:
        def num(name: str, default: float, kind: type) -> float:
            raw = os.environ.get(name)
            if raw is None or raw == "":
                return default
            try:
                value = kind(raw)
            except ValueError:
                raise SystemExit(f"{name}={raw!r} is not a valid {kind.__name__}") from None
            if value <= 0:
                raise SystemExit(f"{name} must be > 0, got {raw!r}")
            return value

        return cls(
            ttl_s=num("FAKEGANG_EPISODE_TTL_S", DEFAULT_TTL_S, float),
            max_episodes=int(num("FAKEGANG_MAX_EPISODES", DEFAULT_MAX_EPISODES, int)),
            max_body_bytes=int(num("FAKEGANG_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, int)),
            max_ws_sessions=int(num("FAKEGANG_MAX_WS_SESSIONS", DEFAULT_MAX_WS_SESSIONS, int)),
            token=token_from_env(),
            allowed_hosts=allowed_hosts(),
        )


def build_app(
    settings: ServerSettings | None = None, registry: EpisodeRegistry | None = None
) -> FastAPI:
    """A fresh app (tests build their own with small caps or a fake clock)."""
    settings = settings or ServerSettings.from_env()
    app = create_app(
        FakeGangEnvironment,
        FakeGangAction,
        FakeGangObservation,
        env_name=ENV_NAME,
        max_concurrent_envs=settings.max_ws_sessions,
        state_cls=FakeGangState,
    )
    app.title = "fakegang_env (OpenEnv)"
    app.version = ENV_VERSION
    app.router.routes[:] = [
        r
        for r in app.router.routes
        if not (isinstance(r, APIRoute) and r.path in _STATELESS_STOCK_ROUTES)
    ]
    install_error_handlers(app)
    if registry is None:  # (an empty registry is falsy: it has a __len__)
        registry = EpisodeRegistry(ttl_s=settings.ttl_s, max_episodes=settings.max_episodes)
    register_http_routes(app, registry, new_episode)
    # Starlette tries routes in order: put the per-step routes first (a little less matching).
    hot = [r for r in app.router.routes if getattr(r, "path", None) in _HOT_ROUTES]
    app.router.routes[:] = hot + [r for r in app.router.routes if r not in hot]
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(WsFrameGuard)  # a binary or non-object /ws frame: error frame, not death
    if settings.token:  # added last, so it runs first: no body is read for a stranger
        app.add_middleware(BearerTokenMiddleware, token=settings.token)
    install_contract(app, secured=bool(settings.token))
    install_security(app, hosts=settings.allowed_hosts, headers=API_HEADERS)
    app.state.registry = registry
    app.state.settings = settings
    return app


app = build_app()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="fakegang_env.server.app", description="Serve fakegang_env over HTTP and /ws."
    )
    add_serve_arguments(parser)
    return parser.parse_args(argv)


def serve(args: argparse.Namespace) -> int:
    """Run uvicorn with the settings from the environment, overridden by the flags."""
    import uvicorn

    settings = ServerSettings.from_env()
    if args.max_episodes is not None:
        settings = replace(settings, max_episodes=args.max_episodes)
    if args.episode_ttl is not None:
        settings = replace(settings, ttl_s=args.episode_ttl)
    if args.token:
        settings = replace(settings, token=args.token)
    settings = replace(settings, allowed_hosts=allowed_hosts(args.host))
    try:
        if settings.token:
            check_token_strength(settings.token)
        check_bind(args.host, settings.token, args.insecure, what="environment server")
    except (InsecureBindError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not port_free(args.port, args.host):
        print(
            f"error: port {args.port} on {args.host} is in use: choose another with --port",
            file=sys.stderr,
        )
        return 2
    server_app = app if settings == app.state.settings else build_app(settings)
    uvicorn.run(
        server_app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        log_config=uvicorn_log_config(),
        ws_max_size=1024 * 1024,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    return serve(parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
