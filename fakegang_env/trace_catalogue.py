"""The catalogue of trace kinds: the one list every part of fakegang iterates.

The engine's `pivot` validation, the trace pass (`fakegang_env/traces.py`), `GET /tasks`, the rule
engine's pivots, the learned yields and their insights, the decision prompt's trace list and the
docs tables all read `trace_kinds()`; adding a kind is one entry in `SHIPPED_KINDS`
(docs/how-to/extend-trace-kind.md). `extended_catalogue` adds kinds for the duration of a test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fakegang_env.trace_kinds import BIO, CREATION, IP, PHOTO, SCHEDULE, TraceKind

__all__ = [
    "SHIPPED_KINDS",
    "extended_catalogue",
    "trace_kind",
    "trace_kinds",
    "trace_names",
]

#: The shipped trace kinds, in catalogue order (the order `/tasks`, the prompt and ties list them).
SHIPPED_KINDS: tuple[TraceKind, ...] = (IP, PHOTO, BIO, CREATION, SCHEDULE)

_active: tuple[TraceKind, ...] = SHIPPED_KINDS


def trace_kinds() -> tuple[TraceKind, ...]:
    """The kinds in force, in catalogue order."""
    return _active


def trace_names() -> tuple[str, ...]:
    return tuple(k.name for k in _active)


def trace_kind(name: str) -> TraceKind:
    """The kind called `name`; KeyError naming the valid ones otherwise."""
    for k in _active:
        if k.name == name:
            return k
    raise KeyError(f"unknown trace {name!r}; valid: {', '.join(trace_names())}")


@contextmanager
def extended_catalogue(*kinds: TraceKind) -> Iterator[tuple[TraceKind, ...]]:
    """The shipped catalogue plus `kinds` until the block ends (tests of a new kind). Process-wide:
    an in-process server sees it too."""
    global _active
    names = [k.name for k in (*_active, *kinds)]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate trace kind names in {names}")
    before = _active
    _active = (*before, *kinds)
    try:
        yield _active
    finally:
        _active = before
