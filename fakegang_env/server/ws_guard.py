"""Keep a `/ws` session alive through a frame OpenEnv's handler cannot take.

OpenEnv's `/ws` loop answers malformed JSON with an error frame, but a binary frame
(`receive_text` fails) or valid JSON that is not an object (`[]`, `5`: `.get` fails) ends the
session and the episode it holds. This middleware sits in front of it: such a frame gets the same
`{"type": "error", "data": {"message", "code"}}` frame and is not passed on, and the session
waits for the next message. Frames that start with `{` (every real message) pass untouched.
"""

from __future__ import annotations

import json
from typing import Any

from openenv.core.env_server.types import WSErrorCode, WSErrorResponse

WS_PATHS = frozenset({"/ws"})


def _refusal(frame: dict) -> str | None:
    """Why OpenEnv's handler would die on this received frame, or None to pass it on."""
    text = frame.get("text")
    if text is None:
        return "binary frames are not accepted: send each message as a JSON object in a text frame"
    head = text.lstrip()[:1]
    if head == "{":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None  # malformed JSON: OpenEnv answers it itself
    return f"a message must be a JSON object with a type, got {type(value).__name__}"


class WsFrameGuard:
    """ASGI middleware: answer bad `/ws` frames with an error frame instead of ending the
    session (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket" or scope.get("path") not in WS_PATHS:
            await self.app(scope, receive, send)
            return

        async def guarded_receive() -> dict:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                reason = _refusal(message)
                if reason is None:
                    return message
                error = WSErrorResponse(
                    data={"message": reason, "code": WSErrorCode.VALIDATION_ERROR}
                )
                await send({"type": "websocket.send", "text": error.model_dump_json()})

        await self.app(scope, guarded_receive, send)
