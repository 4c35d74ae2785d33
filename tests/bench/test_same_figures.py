"""bench/experiments/same_figures.py: timings never count as a moved figure; anything else does."""

from __future__ import annotations

from bench.experiments.same_figures import differences, without_timings


def test_timings_are_left_out_and_every_other_figure_compared() -> None:
    before = {"wall_s": 3.0, "refit_s_max": 0.2, "_db": "/tmp/a", "auc": {"learning": 0.64},
              "curve": [1.0, 0.5], "episode_ms": 9}  # fmt: skip
    after = {"wall_s": 9.0, "refit_s_max": 0.4, "_db": "/tmp/b", "auc": {"learning": 0.68},
             "curve": [1.0, 0.5], "episode_ms": 7}  # fmt: skip
    a, b = without_timings(before), without_timings(after)
    assert set(a) == {"auc", "curve"}
    assert differences(a, b) == [("auc.learning", 0.64, 0.68)]
    assert differences(a, a) == []
    # a list that grew is one moved figure, not a crash
    assert differences({"c": [1]}, {"c": [1, 2]}) == [("c", [1], [1, 2])]
