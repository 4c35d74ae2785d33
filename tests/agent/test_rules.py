"""The rule engine on hand-built observations."""

from __future__ import annotations

from agent_fixtures import observation, profile, ring_member

from fakegang.tools.rules.actions import parse_action
from fakegang.tools.rules.engine import RULED_OUT, propose, score_observation

CUSTOMERS = ["u_c1", "u_c2", "u_c3"]


def test_flags_the_account_in_lockstep_with_a_flagged_member_not_the_innocent() -> None:
    a = ring_member("u_a", ["u_b", *CUSTOMERS])
    b = ring_member("u_b", ["u_a", *CUSTOMERS], account_age_days=93, avg_post_hour=3.4)
    c = profile("u_c", ["u_c1", "u_x"])
    obs = observation([a, b, c], visible=["u_a", "u_b", "u_c", *CUSTOMERS, "u_x"], flagged=["u_a"])
    prop = propose(obs, ["u_a", "u_c"])
    assert prop.action == "flag u_b"
    assert prop.confidence >= 0.5
    assert prop.likelihood["u_c"] < 0.2
    assert prop.likelihood["u_b"] > prop.likelihood["u_c"]


def test_reads_every_starting_account_before_the_first_flag() -> None:
    """A likely member inspected first is not flagged while a starting account is unread."""
    a = ring_member("u_a", ["u_b", *CUSTOMERS])
    b = ring_member("u_b", ["u_a", *CUSTOMERS], account_age_days=93, avg_post_hour=3.4)
    visible = ["u_a", "u_b", "u_s", *CUSTOMERS]
    prop = propose(observation([a, b], visible=visible), ["u_a", "u_b", "u_s"])
    assert prop.action == "inspect u_s"
    assert prop.confidence == 0.9 and "report" in prop.reason
    assert max(prop.likelihood.values()) >= 0.5  # a flag would have been next
    s = profile("u_s", ["u_x"])
    read = propose(observation([a, b, s], visible=[*visible, "u_x"]), ["u_a", "u_b", "u_s"])
    assert parse_action(read.action)[0] == "flag"


def test_unflags_a_flag_the_evidence_does_not_support() -> None:
    d = profile("u_d", ["u_x"])
    obs = observation([d], visible=["u_d", "u_x"], flagged=["u_d"])
    prop = propose(obs, ["u_d"])
    assert prop.action == "unflag u_d"
    assert prop.confidence > 0.7


def test_never_reverses_a_flag_decision_the_llm_made_but_still_offers_it() -> None:
    # a trusted LLM flagged u_d against the evidence: the rule unflagging it on the next step
    # and the LLM flagging it again looped until the action cap
    d = profile("u_d", ["u_x"])
    obs = observation([d], visible=["u_d", "u_x"], flagged=["u_d"])
    prop = propose(obs, ["u_d"], llm_verdicts={"u_d": "flag"})
    assert prop.action != "unflag u_d"
    assert "unflag u_d" in prop.choices  # the LLM may still take its own flag back
    # the other way round: the LLM unflagged u_b, which the rule would flag at once
    a = ring_member("u_a", ["u_b", *CUSTOMERS])
    b = ring_member("u_b", ["u_a", *CUSTOMERS], account_age_days=93, avg_post_hour=3.4)
    obs = observation([a, b], visible=["u_a", "u_b", *CUSTOMERS], flagged=["u_a"])
    assert propose(obs, ["u_a"]).action == "flag u_b"
    prop = propose(obs, ["u_a"], llm_verdicts={"u_b": "unflag"})
    assert prop.action != "flag u_b" and "flag u_b" in prop.choices


def test_never_flags_again_an_account_unflagged_earlier_in_the_episode() -> None:
    # flags cost no budget step: a pair whose scores hang on each other being flagged looped
    # flag, flag, unflag, unflag until the action cap (hard `mixed`, refit weights)
    a = ring_member("u_a", ["u_b", *CUSTOMERS])
    b = ring_member("u_b", ["u_a", *CUSTOMERS], account_age_days=93, avg_post_hour=3.4)
    obs = observation([a, b], visible=["u_a", "u_b", *CUSTOMERS], flagged=["u_a"])
    assert propose(obs, ["u_a"], unflagged=["u_x"]).action == "flag u_b"
    prop = propose(obs, ["u_a"], unflagged=["u_b"])
    assert prop.action != "flag u_b"
    assert "flag u_b" in prop.choices  # the LLM may still flag it again


def test_submits_when_the_budget_cannot_pay_for_an_inspect() -> None:
    a = ring_member("u_a", ["u_b"])
    obs = observation([a], visible=["u_a", "u_b"], flagged=["u_a"], steps_remaining=1)
    prop = propose(obs, ["u_a"])
    assert prop.action == "submit"


def test_explores_what_the_ring_points_at_before_strangers() -> None:
    a = ring_member("u_a", ["u_b", "u_t"])
    b = ring_member("u_b", ["u_a", "u_t"], account_age_days=92)
    obs = observation(
        [a, b], visible=["u_a", "u_b", "u_s", "u_t"], flagged=["u_a", "u_b"], steps_remaining=40
    )
    prop = propose(obs, ["u_a", "u_s"])
    assert prop.action == "inspect u_t"
    assert prop.frontier["u_t"] > prop.frontier["u_s"]


def test_choices_are_legal_and_contain_the_proposal() -> None:
    a = ring_member("u_a", ["u_b", *CUSTOMERS])
    b = ring_member("u_b", ["u_a", *CUSTOMERS], account_age_days=93)
    obs = observation([a, b], visible=["u_a", "u_b", *CUSTOMERS], flagged=["u_a"])
    prop = propose(obs, ["u_a"])
    assert prop.action in prop.choices
    assert "submit" in prop.choices
    visible, inspected = set(obs.visible_account_ids), set(obs.inspected_ids)
    for choice in prop.choices:
        kind, target = parse_action(choice)
        if target is not None:
            assert target in visible
        if kind == "inspect":
            assert target not in inspected
        if kind == "flag":
            assert target not in obs.flagged_ids
        if kind == "unflag":
            assert target in obs.flagged_ids
    # the menu itself, pinned: the unflag branch above has nothing to check here
    assert prop.choices == ["flag u_b", "inspect u_c1", "inspect u_c2", "inspect u_c3", "submit"]


def test_proposal_is_deterministic() -> None:
    a = ring_member("u_a", ["u_b", *CUSTOMERS])
    b = ring_member("u_b", ["u_a", *CUSTOMERS], account_age_days=93)
    obs = observation([a, b], visible=["u_a", "u_b", *CUSTOMERS], flagged=["u_a"])
    assert propose(obs, ["u_a"]) == propose(obs, ["u_a"])


def test_ruled_out_accounts_stop_steering_the_frontier() -> None:
    """An account a dropped hypothesis ruled out scores RULED_OUT, and the accounts only it
    points at fall with it; nothing ruled out scores as before."""
    a = ring_member("u_a", ["u_b", "u_n", *CUSTOMERS])
    b = ring_member("u_b", ["u_a", *CUSTOMERS], account_age_days=93, avg_post_hour=3.4)
    obs = observation([a, b], visible=["u_a", "u_b", "u_n", *CUSTOMERS], flagged=["u_a"])
    likelihood, frontier = score_observation(obs, ["u_a"])
    assert score_observation(obs, ["u_a"], ruled_out=()) == (likelihood, frontier)
    dropped, dropped_frontier = score_observation(obs, ["u_a"], ruled_out={"u_a"})
    assert dropped["u_a"] == RULED_OUT < likelihood["u_a"]
    assert dropped["u_b"] == likelihood["u_b"]  # its own evidence is not ruled out
    assert dropped_frontier["u_n"] < frontier["u_n"]
