"""bench/experiments/learner_ceilings.py: the oracle report reader and the agent that knows the
playbook."""

from __future__ import annotations

from bench.experiments import campaign_curves
from bench.experiments.learner_ceilings import (
    _job,
    knows_playbook,
    oracle_reader,
    read_right,
    summary,
)
from fakegang.tools.learning import tactics_model, trace_yields
from fakegang.tools.rules import report_reader
from fakegang.tools.rules.engine import score_observation
from fakegang_env.engine import Episode
from fakegang_env.operator import opening
from fakegang_env.schema import PlainObservation


def _read_report(ep: Episode) -> tuple[PlainObservation, list[str]]:
    """The observation once every starting account is inspected."""
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    for a in starting:
        obs = PlainObservation(**ep.step("inspect", a, None))
    return obs, starting


def test_the_oracle_reader_names_the_reported_member_and_then_gives_the_reader_back() -> None:
    ep = Episode.for_adaptive_round(opening("hard", 0))
    obs, starting = _read_report(ep)
    profiles = {p.account_id: p for p in obs.visible_accounts}
    shipped = report_reader.posterior
    with oracle_reader(ep.network.reported_id):
        shares = report_reader.posterior("hard", profiles, starting)
        assert shares is not None and shares[ep.network.reported_id] == 1.0
        assert sum(shares.values()) == 1.0
        likelihood, _ = score_observation(obs, starting)
        assert likelihood[ep.network.reported_id] == 1.0  # the engine reads it
        assert report_reader.posterior("hard", {}, starting) is None  # the report unread
        assert read_right(ep, obs, starting) is True
    look_alike = next(a for a in starting if a != ep.network.reported_id)
    with oracle_reader(look_alike):  # a reader sure of the wrong account reads it wrong
        assert read_right(ep, obs, starting) is False
    assert report_reader.posterior is shipped
    assert isinstance(read_right(ep, obs, starting), bool)


def test_the_playbook_agent_scores_with_the_tactics_model_at_the_true_strengths() -> None:
    ep = Episode.for_adaptive_round(opening("hard", 3))
    strengths = dict(ep.playbook.channels)
    assert min(strengths.values()) < 1.0  # the opening weakens something
    weights, yields = knows_playbook(ep, {"frontier": {"bias": 0.0}, "profile_model": object()})
    assert weights["profile"] == tactics_model.profile_weights("hard", strengths)
    assert weights["profile_model"] is None  # nothing learned overrides it
    assert weights["frontier"] == {"bias": 0.0}
    assert yields == trace_yields.prior("hard", {"strength": strengths})
    assert yields != trace_yields.prior("hard", None)


def test_a_small_run_keeps_the_readings_and_the_summary_counts_them(tmp_path) -> None:
    shipped = _job(("hard", "adaptive", 5, 2, "prior", "shipped"))
    oracle = _job(("hard", "adaptive", 5, 2, "playbook", "oracle"))
    assert (shipped["agent"], shipped["reader"], oracle["agent"]) == (
        "prior",
        "shipped",
        "playbook",
    )
    assert all(isinstance(r["read_right"], bool) for r in shipped["rounds"])
    assert "read_right" not in oracle["rounds"][0]
    plain = campaign_curves.campaign("hard", "adaptive", 5, 2, "prior", str(tmp_path))
    assert [r["won"] for r in plain["rounds"]] == [r["won"] for r in shipped["rounds"]]
    found = summary([shipped, oracle], ["prior", "playbook"])
    entry = found["prior/shipped"]
    assert entry["rounds"] == 2 and entry["won"] == sum(r["won"] for r in shipped["rounds"])
    right = sum(r["read_right"] for r in shipped["rounds"])
    assert entry["read_right"] == right / 2
    assert found["playbook/oracle"]["rounds"] == 2
    assert found["prior/oracle"]["rounds"] == 0 and found["prior/oracle"]["win_rate"] is None
