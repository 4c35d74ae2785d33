"""The tactics model: weights linear in channel strengths, strengths inferred from debriefs."""

from __future__ import annotations

import pytest
from agent_fixtures import finished_rules_episode as _finished

from fakegang.tools.learning import experience, refit, tactics_model
from fakegang.tools.memory.store import Memory
from fakegang_env.tactics import CHANNELS


def _profile_rows(task: str, seeds: tuple[int, ...], tactics: str) -> list:
    rows = []
    for seed in seeds:
        obs, starting = _finished(task, seed, tactics)
        labelled = experience.labelled_rows(
            obs, starting, set(obs.ring_ids), experience.load_weights()
        )
        rows += [
            (r["features"], r["label"], r["weight"])
            for r in labelled
            if r["kind"].startswith("profile")
        ]
    return rows


@pytest.mark.parametrize("task", ["easy", "medium", "hard"])
def test_every_task_has_a_fitted_model_with_the_engines_features(task):
    model = tactics_model.load_model()[task]
    shipped = experience.load_weights()["profile"]
    assert set(model["base"]) == set(shipped)
    assert set(model["channels"]) == set(CHANNELS)
    assert all(set(w) == set(shipped) for w in model["channels"].values())


def test_profile_weights_are_the_base_plus_each_channel_times_its_strength():
    model = tactics_model.load_model()["hard"]
    zero = tactics_model.profile_weights("hard", dict.fromkeys(CHANNELS, 0.0))
    only_ip = {**dict.fromkeys(CHANNELS, 0.0), "shared_proxies": 1.0}
    one_ip = tactics_model.profile_weights("hard", only_ip)
    for k in zero:
        assert zero[k] == pytest.approx(model["base"][k], abs=1e-4)
        expected = model["base"][k] + model["channels"]["shared_proxies"][k]
        assert one_ip[k] == pytest.approx(expected, abs=2e-4)
    # a channel left out counts at the prior mean
    assert tactics_model.profile_weights("hard", {}) == tactics_model.profile_weights(
        "hard", dict.fromkeys(CHANNELS, tactics_model.PRIOR_MEAN)
    )


def test_without_rows_the_estimate_is_the_prior_and_with_rows_it_is_deterministic():
    assert tactics_model.estimate("hard", []).strength == dict.fromkeys(
        CHANNELS, tactics_model.PRIOR_MEAN
    )
    rows = _profile_rows("hard", (5,), "classic")
    first = tactics_model.estimate("hard", rows).strength
    assert first == tactics_model.estimate("hard", rows).strength
    assert all(0.0 <= v <= 1.0 for v in first.values())


def test_the_sd_is_the_prior_without_rows_and_shrinks_for_a_channel_the_debriefs_tell():
    """Shared proxies are told by every hard debrief (the ring's IPs); the sd says so, and a
    channel estimated weak one sd up is named as weakened."""
    prior = tactics_model.estimate("hard", [])
    assert set(prior.sd.values()) == {round(tactics_model.PRIOR_STRENGTH**-0.5, 3)}
    assert prior.weakened() == []
    found = tactics_model.estimate("hard", _profile_rows("hard", (5, 6), "residential_proxies"))
    assert found.sd["shared_proxies"] < 0.5 * prior.sd["shared_proxies"]
    assert all(0.0 < v <= prior.sd[c] for c, v in found.sd.items())
    weak = tactics_model.TacticsEstimate(
        {**found.strength, "shared_proxies": 0.1}, {**found.sd, "shared_proxies": 0.2}
    )
    assert "shared_proxies" in weak.weakened()


def test_debriefs_of_residential_proxies_lower_the_shared_proxy_strength():
    """Two hard debriefs each: an operator on residential proxies (shared_proxies 0) reads as one
    that shares proxies less than the classic ring (all channels at 1) does."""
    classic = tactics_model.estimate("hard", _profile_rows("hard", (5, 6), "classic")).strength
    residential = tactics_model.estimate(
        "hard", _profile_rows("hard", (5, 6), "residential_proxies")
    ).strength
    assert residential["shared_proxies"] < classic["shared_proxies"] - 0.3


def test_the_refit_after_a_shift_starts_from_the_tactics_prior(tmp_path, monkeypatch):
    """On drift the profile refit is centred on w(ŝ), not on the shipped weights: with a prior so
    strong that the rows cannot move it, the stored version is the tactics prior itself."""
    memory = Memory(tmp_path / "m.sqlite")
    try:
        obs, starting = _finished("hard", 5, "aged_accounts")  # a debrief the drift check flags
        rows = experience.labelled_rows(obs, starting, set(obs.ring_ids), experience.load_weights())
        experience.store_experience(memory, "hard", "t-1", rows)
        monkeypatch.setitem(refit.PRIOR_STRENGTH, "profile", 1e9)
        version = experience.refit_task(memory, "hard", "t-1")
        prof_rows = [
            (r["features"], r["label"], refit.recency_weight(0) * r["weight"])
            for r in rows
            if r["kind"].startswith("profile")
        ]
        expected, found = tactics_model.adapted_prior("hard", prof_rows)
        assert found.strength != dict.fromkeys(CHANNELS, tactics_model.PRIOR_MEAN)
        assert version.tactics == found.as_json()
        for k, v in expected.items():
            assert version.profile[k] == pytest.approx(v, abs=1e-3)
        assert version.profile != experience.load_weights()["profile"]
    finally:
        memory.close()
