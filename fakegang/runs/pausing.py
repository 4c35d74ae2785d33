"""Pausing a training run: `--pause-before NODE` and `--step` (one node per keypress).

Both use LangGraph's static interrupts per invoke (`interrupt_before=[NODE]` at every step, or
`interrupt_after="*"`); at each pause the state is already checkpointed, so answering `q` (or
closing stdin) leaves a *paused* run that `fakegang resume RUN_ID` continues later.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from fakegang.graph.graph import NODE_NAMES, PREVIOUS_NODE
from fakegang.graph.nodes import APPLIES
from fakegang.runs.replay import describe, isatty


class RunPaused(Exception):  # noqa: N818 - a control-flow signal, not an error
    """The user stopped at a pause; the episode's checkpoint is at `next_nodes`."""

    def __init__(self, thread_id: str, next_nodes: tuple[str, ...]) -> None:
        super().__init__(f"paused {thread_id} before {', '.join(next_nodes)}")
        self.thread_id = thread_id
        self.next_nodes = next_nodes


@dataclass
class PauseControl:
    pause_before: str | None = None
    step: bool = False
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    out: TextIO = field(default_factory=lambda: sys.stdout)

    def __post_init__(self) -> None:
        if self.pause_before is not None and self.pause_before not in NODE_NAMES:
            raise ValueError(
                f"unknown node {self.pause_before!r}: use one of {', '.join(NODE_NAMES)}"
            )

    @property
    def active(self) -> bool:
        return self.step or self.pause_before is not None

    def interrupts(self) -> dict:
        if self.step:
            return {"interrupt_after": "*"}
        return {"interrupt_before": [self.pause_before]}

    def wait(self, values: dict, next_nodes: tuple[str, ...]) -> bool:
        """Show the pause; True to go on, False (EOF or `q`) to leave the run paused."""
        nxt = next_nodes[0]
        ran = PREVIOUS_NODE.get(nxt)
        applied = ran == APPLIES.name
        count = values.get("action_count", 0)
        if applied and values.get("last"):
            count -= 1  # the action is counted once applied: the line is that action's
        where = f"action #{count}"
        if ran and (not applied or values.get("last")):
            print(f"  ⏸ {where} · {ran:<10} {describe(ran, values)}", file=self.out)
        print(f"  ⏸ next: {nxt} — [Enter] continue, q to pause the run: ", end="", file=self.out)
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            print("(end of input)", file=self.out, flush=True)
            return False
        if not isatty(self.stdin):
            print(line.strip(), file=self.out, flush=True)  # echo what a pipe answered
        return line.strip().lower() not in ("q", "quit")


def invoke_with_pauses(app, ctx, config: dict, inp: dict | None, pause: PauseControl) -> None:
    """Run the episode to its end, stopping at every pause; raises RunPaused on `q`/EOF."""
    while True:
        app.invoke(inp, config, context=ctx, durability="sync", **pause.interrupts())
        inp = None
        snap = app.get_state(config)
        if not snap.next:
            return
        if not pause.wait(snap.values, snap.next):
            raise RunPaused(config["configurable"]["thread_id"], snap.next)
