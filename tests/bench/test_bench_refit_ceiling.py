"""bench/experiments/refit_ceiling.py: the loss modes it sorts a campaign's losses into."""

from __future__ import annotations

from bench_modules import load_bench

from fakegang_env.schema import PlainObservation

refit_ceiling = load_bench("refit_ceiling")
RING = ["m1", "m2", "m3", "m4", "m5"]


def finished(message: str, flagged: list[str], inspected: list[str], visible: list[str]):
    return PlainObservation(
        task="hard",
        message=message,
        flagged_ids=flagged,
        inspected_ids=inspected,
        visible_account_ids=visible,
        ring_ids=RING,
        done=True,
    )


def test_a_win_has_no_loss_mode() -> None:
    obs = finished("[WIN] ring taken down", RING, RING, RING)
    assert refit_ceiling.loss_modes("hard", obs) == []


def test_each_way_of_losing_is_named() -> None:
    innocents = ["i1", "i2"]
    # m1-m3 flagged with two innocents (precision 0.6 < 0.8), m4 inspected but not flagged,
    # m5 never visible
    obs = finished(
        "[LOSS] recall 0.60",
        ["m1", "m2", "m3", *innocents],
        ["m1", "m2", "m3", "m4", *innocents],
        ["m1", "m2", "m3", "m4", *innocents],
    )
    assert refit_ceiling.loss_modes("hard", obs) == [
        "false flags",
        "inspected, not flagged",
        "never visible",
    ]
    # everything flagged right, but m5 was on screen and never inspected
    obs = finished("[LOSS] recall 0.80", RING[:4], RING[:4], RING)
    assert refit_ceiling.loss_modes("hard", obs) == ["visible, never inspected"]
    # nothing flagged at all is no false flag
    nothing = finished("[LOSS] no flags", [], [], RING)
    assert refit_ceiling.loss_modes("hard", nothing) == ["visible, never inspected"]
