"""Test-only hook: make one node sleep once so a test can kill the process inside it.

Set `FAKEGANG_TEST_SLEEP_IN=NODE:PHASE:SECONDS[:SKIP]` (PHASE `start` = before the node's body,
`end` = after its body and side effects but before LangGraph saves its writes and checkpoint).
The SKIP+1-th time NODE reaches PHASE in this process, the hook prints
`[test-hook] sleeping in NODE (PHASE)` to stderr and sleeps SECONDS. Unset (the normal case) the
runner adds nothing. It is a LangGraph callback, so the nodes themselves carry no test code.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

ENV_VAR = "FAKEGANG_TEST_SLEEP_IN"


class SleepInNode(BaseCallbackHandler):
    def __init__(self, node: str, phase: str, seconds: float, skip: int = 0) -> None:
        if phase not in ("start", "end"):
            raise ValueError(f"{ENV_VAR}: phase must be start or end, got {phase!r}")
        self.node, self.phase, self.seconds, self.remaining = node, phase, seconds, skip
        self.fired = False
        self._runs: dict[UUID, str] = {}

    def _maybe_sleep(self, phase: str) -> None:
        if self.fired or phase != self.phase:
            return
        if self.remaining > 0:
            self.remaining -= 1
            return
        self.fired = True
        print(f"[test-hook] sleeping in {self.node} ({phase})", file=sys.stderr, flush=True)
        time.sleep(self.seconds)

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kw: Any) -> None:
        node = (kw.get("metadata") or {}).get("langgraph_node")
        if node == self.node and kw.get("name") == node:
            self._runs[run_id] = node
            self._maybe_sleep("start")

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        if self._runs.pop(run_id, None) is not None:
            self._maybe_sleep("end")


_HOOK: SleepInNode | None = None


def callbacks() -> list[BaseCallbackHandler]:
    """The hook (one per process, so it fires once) when the variable is set, else []."""
    global _HOOK
    spec = os.environ.get(ENV_VAR)
    if not spec:
        return []
    if _HOOK is None:
        parts = spec.split(":")
        if len(parts) not in (3, 4):
            raise ValueError(f"{ENV_VAR} must be NODE:PHASE:SECONDS[:SKIP], got {spec!r}")
        skip = int(parts[3]) if len(parts) == 4 else 0
        _HOOK = SleepInNode(parts[0], parts[1], float(parts[2]), skip)
    return [_HOOK]
