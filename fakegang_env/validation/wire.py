"""A raw OpenEnv `/ws` session: the JSON frames OpenEnv's validation collector sends.

Hand-rolled on `websockets` (an OpenEnv dependency) rather than `FakeGangEnv` on purpose: the
validation scripts must see the uncoerced wire (`reward` exactly as served) and start in well
under a second, while `FakeGangEnv` imports `openenv.core` (seconds) and parses into models.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from websockets.sync.client import connect

MAX_MESSAGE_BYTES = 1024 * 1024


class WireError(RuntimeError):
    """The server answered with an error frame or an unexpected envelope."""


def ws_url(base_url: str) -> str:
    """`http://host:port` -> `ws://host:port/ws` (https -> wss)."""
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base.removeprefix("https://") + "/ws"
    return "ws://" + base.removeprefix("http://") + "/ws"


class WsSession:
    """One `/ws` connection = one environment instance on the server."""

    def __init__(self, base_url: str, timeout_s: float = 30.0) -> None:
        self._timeout_s = timeout_s
        self._stack = contextlib.ExitStack()  # websockets wants its connection entered
        self._conn = self._stack.enter_context(
            connect(
                ws_url(base_url), open_timeout=timeout_s, max_size=MAX_MESSAGE_BYTES, proxy=None
            )
        )

    def _exchange(self, kind: str, data: dict[str, Any] | None, expect: str) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": kind}
        if data is not None:
            frame["data"] = data
        self._conn.send(json.dumps(frame))
        reply = json.loads(self._conn.recv(timeout=self._timeout_s))
        if reply.get("type") != expect or not isinstance(reply.get("data"), dict):
            raise WireError(f"{kind}: expected a {expect!r} frame, got {str(reply)[:300]}")
        return reply["data"]

    def reset(self, **options: Any) -> dict[str, Any]:
        """`{"observation", "reward", "done"}` of the new episode."""
        return self._exchange("reset", options, "observation")

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        return self._exchange("step", action, "observation")

    def state(self) -> dict[str, Any]:
        return self._exchange("state", None, "state")

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the server may already have closed the socket
            self._conn.send(json.dumps({"type": "close"}))
        self._stack.close()

    def __enter__(self) -> WsSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def action_dict(
    action_type: str, account_id: str | None, trace: str | None = None
) -> dict[str, Any]:
    """The wire form of an action (no `account_id` key for submit, `trace` only for pivot)."""
    action: dict[str, Any] = {"action_type": action_type}
    if account_id is not None:
        action["account_id"] = account_id
    if trace is not None:
        action["trace"] = trace
    return action
