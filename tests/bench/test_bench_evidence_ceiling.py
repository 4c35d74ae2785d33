"""bench/experiments/evidence_ceiling.py: the perfect-classifier bound on shifted rings (smoke)."""

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


def test_the_pivoting_perfect_classifier_pivots_and_reaches_the_members() -> None:
    """On diversified infrastructure (no shared IP, photo or bio left) it still wins: the
    creation window and the graph carry it; and it really pivots (every trace, first member)."""
    from fakegang_env.engine import Episode
    from fakegang_env.schema import PlainObservation
    from fakegang_env.traces import TRACES

    res = evidence_ceiling.ceiling("medium", [0, 1, 2], "diversified", ("perfect_pivoting",))
    assert res["tactics"] == "diversified" and res["scorers"]["perfect_pivoting"]["win_rate"] == 1
    ep = Episode("medium", 5)
    obs = PlainObservation(**ep.observation())
    ring, starting = set(ep.network.gang_ids), list(obs.visible_account_ids)
    seen = []
    for _ in range(30):
        move = evidence_ceiling.pivot_move(obs, ring, starting)
        if move is None:
            break
        seen.append(move)
        obs = PlainObservation(**ep.step(*move))
        assert obs.last_action_error is None
    pivots = [m for m in seen if m[0] == "pivot"]
    assert [m[2] for m in pivots[: len(TRACES)]] == list(TRACES)
    assert all(m[1] in ring for m in pivots)  # only from members it has inspected
    assert seen[0][1] in starting  # it starts from its leads
