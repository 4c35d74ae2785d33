"""Ctrl-C ends every command within a few seconds, with exit code 130, wherever it lands.

A command that plays episodes handles the interrupt itself (it marks the run `interrupted` and
prints the resume hint); one that does not is given a one-line note here instead of a traceback.
When `fakegang` is the process, it then ends at once (`os._exit`): a thread that is still busy
(a node or an LLM call running in an executor's worker thread, which the interpreter would join
at exit) cannot keep it alive. What the run wrote is already committed (SQLite, WAL mode).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import NoReturn

#: The shell's code for a process ended by SIGINT (128 + 2).
INTERRUPTED = 130


def run_interruptible(command: Callable[[], int]) -> int:
    """Run `command`; a KeyboardInterrupt that reaches here becomes a note and exit code 130."""
    try:
        return command()
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C)", file=sys.stderr, flush=True)
        return INTERRUPTED


def exit_now(code: int) -> NoReturn:
    """End the process with `code` now, after flushing stdout and stderr, without waiting for
    threads the interpreter would otherwise join."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to flush to
            stream.flush()
    os._exit(code)
