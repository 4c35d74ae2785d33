"""Argument types shared by the environment's CLI, its server and the agent's CLI.

Kept apart from `fakegang_env.cli` so that the server (and `fakegang`) can use them without
importing a command-line module.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from fakegang_env.tasks import get_task

__all__ = [
    "positive",
    "port_number",
    "quiet_on_broken_pipe",
    "seed_range",
    "task_name",
    "seed_number",
]


def task_name(text: str) -> str:
    try:
        return get_task(text).name
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def seed_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed must be an integer >= 0, got {value}")
    return value


def seed_range(text: str) -> range:
    """`A-B` (inclusive) or a single seed `N`."""
    first, sep, last = text.partition("-")
    try:
        lo = int(first)
        hi = int(last) if sep else lo
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seeds must look like A-B with integers 0 <= A <= B (e.g. 0-49), got {text!r}"
        ) from None
    if lo < 0 or hi < lo:
        raise argparse.ArgumentTypeError(
            f"seeds must look like A-B with integers 0 <= A <= B (e.g. 0-49), got {text!r}"
        )
    return range(lo, hi + 1)


def positive(kind: type):
    """An argparse type: a number of `kind` above zero (also used by `fakegang eval`)."""

    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a valid {kind.__name__}: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value

    return convert


def port_number(text: str) -> int:
    value = positive(int)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"port must be 1-65535, got {text}")
    return value


def quiet_on_broken_pipe(run: Callable[[], int]) -> int:
    """Run a command; if the reader of its output went away (`... | head`), end quietly as the
    shell's own tools do: no traceback, exit status 141 (128 + SIGPIPE)."""
    try:
        code = run()
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout once more at exit
        return 141
