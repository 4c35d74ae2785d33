"""`fakegang view`: the local, read-only trace viewer in the browser (app in fakegang/view/)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fakegang.cli.settings import add_setting_arguments
from fakegang_env.arguments import port_number

DEFAULT_PORT = 8321


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def cmd_view(args: argparse.Namespace) -> int:
    from fakegang.view.auth import VIEW_TOKEN_ENV, token_from_env
    from fakegang.view.db import ViewError, check_database
    from fakegang_env.server.auth import check_bind, check_token_strength

    token = args.token or token_from_env()
    try:
        if token:
            check_token_strength(token)
        check_bind(args.host, token, args.insecure, what="viewer", token_env=VIEW_TOKEN_ENV)
    except ValueError as exc:  # InsecureBindError is one
        return _fail(str(exc))
    db = Path(args.db_path)
    try:
        check_database(db)
    except ViewError as exc:
        return _fail(f"{exc} (pass --db PATH: a database written by `fakegang train`)")
    from fakegang_env.server.serve_args import port_free

    if not port_free(args.port, args.host):
        return _fail(f"port {args.port} on {args.host} is in use: choose another with --port")
    import uvicorn

    from fakegang.view.app import create_app
    from fakegang_env.server.security import allowed_hosts, uvicorn_log_config

    app = create_app(db, token=token, allowed_hosts=allowed_hosts(args.host))
    where = f"http://{args.host}:{args.port}/"
    print(
        f"fakegang view: {where} (read-only over {db}{'; token required' if token else ''}); "
        "Ctrl-C to stop",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        log_config=uvicorn_log_config(),  # `?token=` never reaches the access log
    )
    return 0


def add_view_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="browse runs and step through episodes in the browser")
    add_setting_arguments(p, ("db_path",))  # opened read-only
    p.add_argument("--host", default="127.0.0.1", help="bind address (default: 127.0.0.1)")
    p.add_argument(
        "--port", type=port_number, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})"
    )
    p.add_argument(
        "--token",
        default=None,
        help="require this token (prefer $FAKEGANG_VIEW_TOKEN: a flag shows in the process "
        "list); needed to bind beyond loopback; open the page once as /?token=TOKEN",
    )
    p.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-loopback --host without a token (private networks only)",
    )
    p.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    p.set_defaults(func=cmd_view, db_writes=False)
