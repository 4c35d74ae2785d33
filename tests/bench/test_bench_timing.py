"""bench/speed/timing.py, the speed benches' one harness: what it measures and how it lays out."""

from __future__ import annotations

import math
import time

import pytest
from bench_modules import load_bench

timing = load_bench("timing")


def test_lap_adds_the_block_wall_time_and_nothing_when_it_raises() -> None:
    laps: list[float] = []
    with timing.lap(laps):
        time.sleep(0.01)
    assert len(laps) == 1 and laps[0] >= 0.01
    with pytest.raises(RuntimeError), timing.lap(laps):
        raise RuntimeError("a failed step is not a timing")
    assert len(laps) == 1


def test_timed_returns_the_result_and_its_time() -> None:
    out, took = timing.timed(sorted, [3, 1, 2])
    assert out == [1, 2, 3] and took >= 0


def test_median_spread_ratio() -> None:
    assert timing.median([3.0, 1.0, 2.0]) == 2.0
    assert math.isnan(timing.median([]))
    assert timing.spread([0.0011, 0.0031, 0.0021], scale=1000, digits=1) == {
        "median": 2.1,
        "max": 3.1,
    }
    assert timing.ratio(3.0, 2.0) == 1.5 and timing.ratio(1.0, 3.0) == 0.33


def test_aligned_pads_labels_with_a_value_and_right_aligns_values() -> None:
    rows = [("HEADER", ""), ("  a", "1", "note"), ("  longer", "22")]
    assert timing.aligned(rows, value_width=3) == [
        "HEADER",
        "  a         1  note",
        "  longer   22",
    ]
