"""bench/evidence_ceiling.py: the perfect-classifier bound on shifted rings (smoke size)."""

from __future__ import annotations

from bench_modules import load_bench

evidence_ceiling = load_bench("evidence_ceiling")


def test_a_perfect_classifier_bounds_the_shipped_one_and_misses_are_counted() -> None:
    res = evidence_ceiling.ceiling("medium", [2, 3, 4])
    shipped, perfect = res["scorers"]["shipped"], res["scorers"]["perfect"]
    investigating = res["scorers"]["perfect_investigating"]
    assert res["seeds"] == [2, 4]
    assert perfect["win_rate"] >= shipped["win_rate"]
    for r in (shipped, perfect, investigating):
        assert r["lost"] == round(3 * (1 - r["win_rate"]))
        assert 0 <= r["members_missed_never_visible"] <= r["members_missed"]
        assert r["lost_with_budget_left"] <= r["lost"]
    # the truth as scores never flags an innocent: a lost game is a missed member
    assert perfect["members_missed"] >= perfect["lost"]
    # seed 3 loses with members never seen; investigating before submitting reveals them
    assert perfect["members_missed_never_visible"] > 0
    assert investigating["members_missed_never_visible"] == 0
