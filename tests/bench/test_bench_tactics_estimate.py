"""bench/experiments/tactics_estimate.py: the tactics estimate vs held-out playbooks (smoke)."""

from __future__ import annotations

from bench_modules import load_bench

from fakegang_env.tactics import CHANNELS

tactics_estimate = load_bench("tactics_estimate")


def test_the_estimate_is_scored_against_the_playbooks_truth() -> None:
    res = tactics_estimate.summary("medium", playbooks=2, debriefs=2)
    assert [r["debriefs"] for r in res["by_debriefs"]] == [1, 2]
    for r in res["by_debriefs"]:
        assert 0.0 <= r["mae"] <= 1.0 and 0.0 <= r["within_one_sd"] <= 1.0
        # the prior's error does not depend on the debriefs
        assert r["prior_mae"] == res["by_debriefs"][0]["prior_mae"]
    assert set(res["mae_by_channel_last"]) == set(CHANNELS)
    truth, found = tactics_estimate.estimates("medium", 0, 2)
    assert set(truth) == set(CHANNELS) and len(found) == 2
    assert found == tactics_estimate.estimates("medium", 0, 2)[1]  # deterministic
