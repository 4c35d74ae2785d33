"""bench/experiments/tactics_calibration.py's pivot yields (smoke): what a member's pivot finds."""

from __future__ import annotations

from bench_modules import load_bench

tactics_calibration = load_bench("tactics_calibration")


def test_pivot_yields_follow_the_generations() -> None:
    classic = tactics_calibration.pivot_yields("medium", "classic", [0, 1, 2])
    diversified = tactics_calibration.pivot_yields("medium", "diversified", [0, 1, 2])
    # classic: one scheduler for the whole ring; diversified: members on crowds' values
    assert classic["schedule"]["members"] > 5 * max(classic["schedule"]["innocents"], 0.2)
    for trace in ("ip", "photo", "bio", "schedule"):
        assert diversified[trace]["members"] < classic[trace]["members"], trace
        assert diversified[trace]["innocents"] > classic[trace]["innocents"] or trace == "ip"
    assert diversified["creation"] == classic["creation"]  # the creation burst is kept
    table = tactics_calibration.yields_table(
        {
            "seeds": "0-2",
            "rows": [{"task": "medium", "tactics": "classic", "pivot_yields": classic}],
        }
    )
    assert "schedule" in table.splitlines()[1] and "classic" in table.splitlines()[-1]
