"""Ctrl-C ends every command within a few seconds, with exit code 130, wherever it lands.

A command that plays episodes handles the interrupt itself (it marks the run `interrupted` and
prints the resume hint); one that does not is given a one-line note here instead of a traceback.
When `fakegang` is the process, it then exits as usual (the worker pools shut down, files are
flushed), but a watchdog ends it after `GRACE_S` if that exit is held up: the interpreter joins
every non-daemon thread, so a node or an LLM call still running in an executor's worker thread
would otherwise keep the process alive. The watchdog stops this process's worker processes
first. What the run wrote is already committed (SQLite, WAL mode).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable

#: The shell's code for a process ended by SIGINT (128 + 2).
INTERRUPTED = 130
#: Seconds a normal exit may take after Ctrl-C before the watchdog ends the process.
GRACE_S = 3.0


def run_interruptible(command: Callable[[], int]) -> int:
    """Run `command`; a KeyboardInterrupt that reaches here becomes a note and exit code 130."""
    try:
        return command()
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C)", file=sys.stderr, flush=True)
        return INTERRUPTED


def _force_exit(code: int) -> None:
    """Stop this process's worker processes, flush, and end the process now."""
    for child in multiprocessing.active_children():
        with contextlib.suppress(OSError, ValueError):
            child.terminate()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to flush to
            stream.flush()
    os._exit(code)


def exit_within_grace(code: int, grace_s: float = GRACE_S) -> None:
    """Arm the watchdog: unless the process has exited by then, `_force_exit(code)` in
    `grace_s` seconds. A daemon thread, so it runs while the interpreter joins the others."""
    watchdog = threading.Timer(grace_s, _force_exit, (code,))
    watchdog.daemon = True
    watchdog.start()
