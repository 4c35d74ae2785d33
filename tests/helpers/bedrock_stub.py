"""A tiny local stand-in for the Bedrock Converse endpoint (127.0.0.1 only, no AWS).

`POST /model/{modelId}/converse` answers from a script: each entry is either a Converse response
body (HTTP 200) or an `Error(status, code, message)`; the last entry repeats once the script
runs out.  Every request body is recorded so tests can check what langchain-aws sent.
Point `ChatBedrockConverse(endpoint_url=stub.url)` at it with fake static credentials.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote


@dataclass(frozen=True)
class Error:
    status: int
    code: str
    message: str = "stubbed error"


@dataclass(frozen=True)
class Slow:
    """Answer `body` only after `delay_s` seconds (for client read timeouts)."""

    delay_s: float
    body: dict[str, Any]


def usage(tokens_in: int = 100, tokens_out: int = 20) -> dict[str, int]:
    return {
        "inputTokens": tokens_in,
        "outputTokens": tokens_out,
        "totalTokens": tokens_in + tokens_out,
    }


def converse_body(
    content: list[dict[str, Any]], stop: str = "end_turn", **kw: int
) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": usage(**kw),
        "metrics": {"latencyMs": 12},
    }


def text_answer(text: str, **kw: int) -> dict[str, Any]:
    return converse_body([{"text": text}], **kw)


def tool_answer(name: str, arguments: dict[str, Any], **kw: int) -> dict[str, Any]:
    block = {"toolUse": {"toolUseId": "tooluse_1", "name": name, "input": arguments}}
    return converse_body([block], stop="tool_use", **kw)


def reasoning_answer(reasoning: str, text: str, **kw: int) -> dict[str, Any]:
    blocks = [
        {"reasoningContent": {"reasoningText": {"text": reasoning, "signature": "sig"}}},
        {"text": text},
    ]
    return converse_body(blocks, **kw)


class BedrockStub:
    """Context manager running the stub server in a daemon thread."""

    def __init__(self, script: list[dict[str, Any] | Error | Slow]):
        if not script:
            raise ValueError("the stub needs at least one scripted response")
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []  # {"model_id", "body"}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> BedrockStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self) -> dict[str, Any] | Error | Slow:
        with self._lock:
            index = min(len(self.requests) - 1, len(self.script) - 1)
            return self.script[index]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                parts = self.path.split("/")
                if len(parts) != 4 or parts[1] != "model" or parts[3] != "converse":
                    self._send(
                        404, {"message": f"no route {self.path}"}, "ResourceNotFoundException"
                    )
                    return
                with stub._lock:
                    stub.requests.append({"model_id": unquote(parts[2]), "body": json.loads(raw)})
                item = stub._next()
                if isinstance(item, Error):
                    self._send(item.status, {"message": item.message}, item.code)
                elif isinstance(item, Slow):
                    time.sleep(item.delay_s)
                    with contextlib.suppress(OSError):  # the client may have hung up
                        self._send(200, item.body)
                else:
                    self._send(200, item)

            def _send(self, status: int, body: dict[str, Any], error_type: str = "") -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if error_type:
                    self.send_header("x-amzn-ErrorType", error_type)
                self.end_headers()
                self.wfile.write(data)

        return Handler
