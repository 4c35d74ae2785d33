"""The speed benches' one timing harness: the wall time of a block or a call, the median and
maximum of a series, a ratio against a baseline, and the aligned rows of their text tables.

Wall time is `time.perf_counter` everywhere, so two benches' figures mean the same thing; a bench
that wants CPU time as well (it moves less when other processes share the cores) reads
`time.process_time` beside it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def lap(into: list[float]) -> Iterator[None]:
    """Append the block's wall time (seconds) to `into`; a block that raises adds nothing."""
    started = time.perf_counter()
    yield
    into.append(time.perf_counter() - started)


def timed(fn: Callable[..., T], *args: object, **kwargs: object) -> tuple[T, float]:
    """`fn(*args, **kwargs)` and its wall time in seconds."""
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - started


def median(values: Iterable[float]) -> float:
    """The median; NaN for no values (a table shows "nan" rather than the bench failing)."""
    values = list(values)
    return statistics.median(values) if values else float("nan")


def spread(times: Sequence[float], scale: float = 1.0, digits: int | None = None) -> dict:
    """`{"median": ..., "max": ...}` of `times` times `scale` (1000: milliseconds), rounded to
    `digits` when given."""

    def fmt(v: float) -> float:
        return v * scale if digits is None else round(v * scale, digits)

    return {"median": fmt(statistics.median(times)), "max": fmt(max(times))}


def ratio(value: float, base: float, digits: int = 2) -> float:
    """`value / base`, rounded: a speed-up (base / run) or a slow-down (run / base)."""
    return round(value / base, digits)


def aligned(rows: Sequence[tuple[str, ...]], value_width: int = 0) -> list[str]:
    """Table lines from `(label, value[, note])` rows: labels padded to the widest label that has
    a value, values right-aligned to `value_width`, trailing blanks dropped. A row without a value
    is a header and does not widen the label column."""
    width = max((len(row[0]) for row in rows if any(row[1:])), default=0)
    lines = []
    for label, *rest in rows:
        cells = [f"{label:<{width}}"]
        if rest:
            cells += [f"{rest[0]:>{value_width}}", *rest[1:]]
        lines.append("  ".join(cells).rstrip())
    return lines
