"""The rule engine on hand-built observations."""

from __future__ import annotations

from agent_fixtures import observation, profile, ring_member

from fakegang.tools.learning import experience, trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules import engine, report_reader
from fakegang.tools.rules.actions import parse_action
from fakegang.tools.rules.engine import FLAG_AT, RULED_OUT, Proposal, propose, score_observation
from fakegang.tools.rules.player import play_episode
from fakegang_env.engine import Episode

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


def _read_report() -> tuple[list, list[str]]:
    """Two starting accounts read, neither likely enough to flag; u_s1 the likelier."""
    s1 = profile("u_s1", ["u_x"], photo_reuse_score=0.3, account_age_days=120)
    s2 = profile("u_s2", ["u_y"])
    return [s1, s2], ["u_s1", "u_s2", "u_x", "u_y"]


def test_a_hypothesis_from_the_report_once_nothing_is_flagged_late_in_the_budget() -> None:
    profiles, visible = _read_report()
    starting = ["u_s1", "u_s2"]
    early = propose(
        observation(profiles, visible=visible, steps_remaining=40), starting, hypotheses=[]
    )
    assert not early.hypothesis and not early.action.startswith("flag")  # 10 of 50 steps used
    late_obs = observation(profiles, visible=visible, steps_remaining=30)
    late = propose(late_obs, starting, hypotheses=[])
    # a caller that does not record hypotheses (None) gets none: it could not hold them
    assert not propose(late_obs, starting).action.startswith("flag")
    p1, p2 = late.likelihood["u_s1"], late.likelihood["u_s2"]
    assert p2 < p1 < FLAG_AT
    assert late.action == "flag u_s1" and late.hypothesis and "hypothesis" in late.reason
    assert late.confidence == round(p1 / (p1 + p2), 4)  # its share of the starting accounts


def test_the_rule_holds_a_hypothesis_until_its_patience_runs_out() -> None:
    profiles, visible = _read_report()
    starting = ["u_s1", "u_s2"]
    obs = observation(profiles, visible=visible, flagged=["u_s1"], steps_remaining=30)
    assert propose(obs, starting).action == "unflag u_s1"  # scored under UNFLAG_BELOW
    held = propose(obs, starting, hypotheses=[("u_s1", 20)])
    assert held.action != "unflag u_s1" and not held.hypothesis
    later = observation(profiles, visible=visible, flagged=["u_s1"], steps_remaining=25)
    dropped = propose(later, starting, hypotheses=[("u_s1", 20)])  # 5 = 0.1 of 50 steps later
    assert dropped.action == "unflag u_s1" and "hypothesis dropped" in dropped.reason
    # the next one is the other starting account, and there is no third
    after = observation(profiles, visible=visible, steps_remaining=24)
    second = propose(after, starting, unflagged=["u_s1"], hypotheses=[("u_s1", 20)])
    assert not propose(after, starting, unflagged=["u_s1"]).hypothesis
    assert second.action == "flag u_s2" and second.hypothesis
    tried = [("u_s1", 20), ("u_s2", 26)]
    third = propose(after, starting, unflagged=["u_s1", "u_s2"], hypotheses=tried)
    assert not third.hypothesis and not third.action.startswith("flag")


def test_a_hypothesis_that_grew_a_core_is_not_dropped() -> None:
    profiles, visible = _read_report()
    obs = observation(profiles, visible=visible, flagged=["u_s1", "u_s2"], steps_remaining=10)
    prop = propose(obs, ["u_s1", "u_s2"], hypotheses=[("u_s1", 20)])
    assert prop.action != "unflag u_s1"


def test_a_hypothesis_wins_a_round_the_rule_alone_loses(tmp_path, monkeypatch) -> None:
    """Hard `mixed` campaign 133, round 0, with learning's starting weights and without the
    report reader (which finds this member itself: tests/agent/test_report_reader.py): nothing
    reaches the flag threshold, the hypothesis is the reported member and its core is the ring."""
    monkeypatch.setattr(report_reader, "posterior", lambda *_: None)
    memory = Memory(tmp_path / "memory.sqlite")
    weights = experience.latest_version(memory, "hard").as_rule_weights()
    yields = trace_yields.prior("hard", None)

    def played() -> tuple[dict, list[Proposal]]:
        seen: list[Proposal] = []
        out = play_episode(
            Episode.for_round("hard", 133, 0, "mixed"),
            lambda _ep, _obs, _start, p: seen.append(p),
            scorer=lambda _ep, obs, start: score_observation(obs, start, weights, yields),
            pivot_yields=yields,
        )
        return out, [p for p in seen if p.hypothesis]

    won, hypotheses = played()
    ring = set(Episode.for_round("hard", 133, 0, "mixed").network.gang_ids)
    assert won["won"] and [parse_action(p.action)[1] in ring for p in hypotheses] == [True]
    monkeypatch.setattr(engine, "HYPOTHESES", 0)
    lost, none = played()
    assert not lost["won"] and none == []
    memory.close()
