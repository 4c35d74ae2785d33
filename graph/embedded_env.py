"""An environment server embedded in the training process, on a free loopback port.

Runs the real OpenEnv app under uvicorn in a daemon thread, so `python train.py` works with no
server started by hand and leaves no orphan process behind if the run is killed. Its event loop
is asyncio's, never uvloop: a uvloop loop left in a daemon thread can run a libuv callback while
the interpreter is being torn down, which crashes the process (SIGSEGV) instead of exiting.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

STARTUP_TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def embedded_env_server(port: int | None = None) -> Iterator[str]:
    # lazy: the server app imports OpenEnv (seconds); only runs without --env-url need it
    import uvicorn

    from fakegang_env.server.app import app

    port = port or free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False, loop="asyncio"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="fakegang-env-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"embedded environment server did not start on port {port}")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
