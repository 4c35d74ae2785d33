"""Learning that pays: refit, versions, bounded tables, credit, insights, expert (unit level)."""

from __future__ import annotations

import threading

import pytest
from agent_fixtures import finished_rules_episode as _finished

from fakegang.tools.learning import credit, credit_store, experience, insights, refit
from fakegang.tools.learning.alpha import ALPHA_CAPS, ALPHA_FLOOR
from fakegang.tools.memory.store import Memory
from fakegang.tools.models.expert_llm import expert_choice, oracle_choice, parse_expert_spec
from fakegang.tools.rules.player import play_rules
from fakegang_env.engine import Episode


@pytest.fixture
def memory(tmp_path):
    m = Memory(tmp_path / "m.sqlite")
    yield m
    m.close()


# ------------------------------------------------------------------------------------- refit
def test_refit_without_rows_is_the_prior_and_is_deterministic():
    prior = {"bias": -1.0, "a": 2.0, "b": 0.5}
    assert refit.fit_map(prior, [], 1.0) == prior
    rows = [({"a": 1.0, "b": float(i % 3)}, i % 2, 1.0) for i in range(200)]
    first, second = refit.fit_map(prior, rows, 1.0), refit.fit_map(prior, rows, 1.0)
    assert first == second
    assert first != prior


def test_refit_moves_a_little_with_little_data_and_more_with_more():
    prior = {"bias": 0.0, "ip": 3.0}

    # the evidence says `ip` carries nothing: half the accounts with and without a shared IP
    # are members (with `ip` always 1 it would be the bias under another name)
    def rows(n):
        return [({"ip": float(i % 4 < 2)}, i % 2, 1.0) for i in range(n)]

    little = refit.fit_map(prior, rows(4), 4.0)["ip"]
    lots = refit.fit_map(prior, rows(400), 4.0)["ip"]
    assert 3.0 > little > lots
    assert lots < 0.5


def _map_gradient(prior, rows, strength, weights):
    """Gradient of the MAP objective at `weights` (zero at the optimum)."""
    import numpy as np

    names = sorted(k for k in prior if k != "bias")
    w = np.array([weights["bias"]] + [weights[n] for n in names])
    w0 = np.array([prior["bias"]] + [prior[n] for n in names])
    x = np.array([[1.0] + [f.get(n, 0.0) for n in names] for f, _, _ in rows])
    y = np.array([float(label) for _, label, _ in rows])
    sw = np.array([weight for _, _, weight in rows])
    p = 0.5 * (1.0 + np.tanh(0.5 * (x @ w)))
    return x.T @ (sw * (p - y)) + strength * (w - w0)


def test_refit_reaches_the_optimum_where_plain_newton_steps_diverge():
    """Few, separable, unevenly weighted rows far from the prior: undamped Newton steps ended
    at bias 4.0, a 21.5, b 30.9 here (gradient 192), as they did on hard `mixed` debriefs where
    the engine then flagged every account it inspected. The line search must reach the MAP."""
    import random

    rng = random.Random(0)
    prior = {"bias": -6.0, "a": 5.0, "b": -3.0}
    rows = []
    for _ in range(rng.randint(5, 30)):
        label = int(rng.random() < 0.3)
        feats = {"a": rng.random() * (3 if label else 1), "b": rng.random() * 5}
        rows.append((feats, label, rng.choice([1.0, 1.0, 8.0])))
    fitted = refit.fit_map(prior, rows, 1.0)
    assert abs(_map_gradient(prior, rows, 1.0, fitted)).max() < 1e-2  # weights are rounded
    assert all(abs(v) < 10 for v in fitted.values())


def test_refit_from_real_debriefs_is_fast_and_versioned(memory):
    obs, starting = _finished("medium", 3, "aged_accounts")
    ring = set(obs.ring_ids)
    rows = experience.labelled_rows(obs, starting, ring, experience.load_weights())
    assert {r["kind"] for r in rows} == {"profile", "profile0", "profile1", "frontier"}
    inspected_members = ring & {p.account_id for p in obs.visible_accounts}
    assert sum(r["label"] for r in rows if r["kind"] == "profile") == len(inspected_members)
    # profile1: the same accounts against a core of the first member inspected, alone
    profile1 = {r["account_id"]: r for r in rows if r["kind"] == "profile1"}
    assert set(profile1) == {p.account_id for p in obs.visible_accounts}
    first = next(a for a in obs.inspected_ids if a in ring)
    assert profile1[first]["features"]["has_core"] == 0.0  # its core excludes itself
    others = [r for a, r in profile1.items() if a != first]
    assert all(r["features"]["has_core"] == 1.0 for r in others)
    assert max(r["features"]["core_in"] + r["features"]["core_out"] for r in others) <= 2.0
    experience.store_experience(memory, "medium", "t1", rows)
    v1 = experience.refit_task(memory, "medium", "t1")  # its time: bench/speed/agent_bench.py
    assert v1.version >= 1 and v1.thread_id == "t1"
    assert experience.refit_task(memory, "medium", "t1") == v1  # re-run of reflect: same row
    assert experience.latest_version(memory, "medium") == v1
    assert experience.get_version(memory, "medium", v1.version).profile == v1.profile
    assert (
        experience.get_version(memory, "medium", 0).profile == experience.load_weights()["profile"]
    )
    # a second database refitting the same debrief gets the same weights (deterministic)
    other = Memory(memory.path.with_name("other.sqlite"))
    experience.store_experience(other, "medium", "t1", rows)
    assert experience.refit_task(other, "medium", "t1").profile == v1.profile
    other.close()


def test_two_trainings_refitting_one_episode_store_one_version(memory):
    # a resumed run racing a stale one on the same file: both finish the same episode at once
    obs, starting = _finished("medium", 3, "aged_accounts")
    rows = experience.labelled_rows(obs, starting, set(obs.ring_ids), experience.load_weights())
    other = Memory(memory.path)
    threads = [f"t{i}" for i in range(8)]
    for t in threads:
        experience.store_experience(memory, "medium", t, rows)
    results: dict[str, list] = {t: [] for t in threads}

    def refit_all(mem: Memory, gate: threading.Barrier) -> None:
        for t in threads:
            gate.wait()
            results[t].append(experience.refit_task(mem, "medium", t).version)

    gate = threading.Barrier(2)
    workers = [threading.Thread(target=refit_all, args=(m, gate)) for m in (memory, other)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    other.close()
    stored = list(memory.db.query("select thread_id, count(*) n from weight_versions group by 1"))
    assert {r["thread_id"]: r["n"] for r in stored} == dict.fromkeys(threads, 1)
    assert all(len(set(v)) == 1 for v in results.values()), results  # both saw the same row


def test_a_pruned_or_unknown_version_is_refused_clearly(memory):
    with pytest.raises(experience.WeightsVersionError, match="cannot be reproduced"):
        experience.get_version(memory, "hard", 12345)


def test_learning_starts_from_the_unknown_operators_model(memory):
    """Before any debrief a learning episode pins the tactics model at the `mixed` mean, not the
    classic-ring weights: on medium `mixed` rings it finds what the shipped weights miss."""
    from fakegang.tools.learning import tactics_model
    from fakegang.tools.rules.engine import score_observation
    from fakegang.tools.rules.pivots import shipped_yields

    start = experience.latest_version(memory, "medium")
    assert start.version == experience.UNKNOWN_OPERATOR_VERSION
    assert start.profile == tactics_model.profile_weights("medium", {})
    assert start.frontier == experience.load_weights()["frontier"]
    assert experience.get_version(memory, "medium", start.version) == start
    assert experience.get_version(memory, "medium", 0) == experience.shipped_version("medium")

    yields = shipped_yields("medium")

    def wins(weights) -> int:
        return sum(
            play_rules(
                "medium",
                seed,
                tactics="mixed",
                pivot_yields=yields,
                scorer=lambda _ep, obs, begin: score_observation(obs, begin, weights, yields),
            )["won"]
            for seed in range(100, 120)
        )

    assert wins(start.as_rule_weights()) >= wins(None) + 5  # measured: 9 against 0


def test_experience_and_versions_stay_bounded(memory, monkeypatch):
    monkeypatch.setattr(experience, "MAX_VERSIONS_PER_TASK", 5)
    obs, starting = _finished("easy", 1)
    rows = experience.labelled_rows(obs, starting, set(obs.ring_ids), experience.load_weights())
    n = experience.MAX_EXPERIENCE_EPISODES + 4
    for i in range(n):
        experience.store_experience(memory, "easy", f"t{i}", rows)
        experience.refit_task(memory, "easy", f"t{i}")
    threads = experience.experience_threads(memory, "easy")
    assert threads == [f"t{i}" for i in range(4, n)]
    assert len(experience.version_history(memory, "easy")) == 5


# ------------------------------------------------------------------------------------ credit
def _step(action, rule, llm, status="ok"):
    return {"action": action, "rule_action": rule, "llm_action": llm, "llm_status": status}


def test_credit_counts_only_disagreements_the_debrief_judges():
    ring = {"u_m1", "u_m2"}
    steps = [
        _step("flag u_m1", "flag u_m1", "flag u_m1"),  # agreement: nothing
        _step("inspect u_x", "inspect u_x", "inspect u_m2"),  # LLM better (member)
        _step("flag u_m2", "flag u_m2", "flag u_x"),  # LLM worse (innocent)
        _step("inspect u_y", "inspect u_y", "inspect u_z"),  # both innocents: tie
        _step("inspect u_q", "inspect u_q", None, "skipped"),  # not asked
        _step("inspect u_x", "inspect u_x", "flag u_y"),  # LLM worse (innocent)
    ]
    got = credit.judge_steps(steps, ring, win_recall=0.9, won=False)
    assert (got.better, got.worse, got.ties) == (1, 2, 1)


def test_a_pivot_is_judged_by_its_page_and_never_without_one():
    """A pivot that ran is worth the members its page revealed that were not inspected yet; a
    pivot nobody ran has no page, so a disagreement over it is a tie, not a win for its side."""
    ring = {"u_m1", "u_m2", "u_m3"}
    pivots = [
        {
            "account_id": "u_m1",
            "trace": "ip",
            "at_step": 1,
            "total": 3,
            "account_ids": ["u_m2", "u_m3", "u_x"],
        },
        {
            "account_id": "u_m1",
            "trace": "bio",
            "at_step": 3,
            "total": 40,
            "account_ids": ["u_a", "u_b"],
        },
    ]
    steps = [
        _step("inspect u_m1", "inspect u_m1", "inspect u_m1"),
        # a page of two new members beats inspecting an innocent; an empty page loses to
        # inspecting a member
        _step("pivot u_m1 ip", "pivot u_m1 ip", "inspect u_x"),
        _step("inspect u_m2", "inspect u_m2", "pivot u_m1 bio"),
        # the rule's pivot from a member was never run: a tie, however good its source
        _step("inspect u_y", "pivot u_m1 schedule", "inspect u_y"),
    ]
    got = credit.judge_steps(steps, ring, 0.9, won=False, pivots=pivots)
    assert (got.better, got.worse, got.ties) == (0, 2, 1)
    # once its members are inspected, the same page reveals nothing new: as bad as an innocent
    later = [
        _step("inspect u_m2", "inspect u_m2", "inspect u_m2"),
        _step("inspect u_m3", "inspect u_m3", "inspect u_m3"),
        _step("inspect u_x", "inspect u_x", "pivot u_m1 ip"),
    ]
    got = credit.judge_steps(later, ring, 0.9, won=False, pivots=pivots)
    assert (got.better, got.worse, got.ties) == (0, 0, 1)
    # without the pages (an episode recorded before pivots were judged by them): all ties
    assert credit.judge_steps(steps, ring, 0.9, won=False).ties == 3


def test_premature_submit_loses_to_a_flag_of_a_member():
    steps = [_step("submit", "submit", "flag u_m2")]
    assert credit.judge_steps(steps, {"u_m1", "u_m2"}, 0.8, won=False).better == 1


def test_a_winning_submit_is_judged_by_the_outcome_once_per_episode():
    """Flags complete: the LLM says submit at every step while the rule goes on inspecting. In
    a won episode that earns nothing; in a lost one it earns one win, not one per step."""
    ring = {"u_m1", "u_m2"}
    steps = [
        _step("flag u_m1", "flag u_m1", "flag u_m1"),
        _step("flag u_m2", "flag u_m2", "flag u_m2"),
        *(_step(f"inspect u_{i}", f"inspect u_{i}", "submit") for i in range(5)),
        _step("submit", "submit", "inspect u_x"),
    ]
    won = credit.judge_steps(steps, ring, 0.9, won=True)
    assert (won.better, won.worse, won.ties) == (0, 0, 6)
    lost = credit.judge_steps(steps, ring, 0.9, won=False)
    assert (lost.better, lost.worse, lost.ties) == (1, 0, 5)
    # a premature submit stays a loss whatever the outcome
    early = [_step("inspect u_x", "inspect u_x", "submit")]
    assert credit.judge_steps(early, ring, 0.9, won=True).worse == 1


def test_alpha_from_credit_floor_prior_and_cap():
    assert credit.credit_alpha("hard", credit.Credit()) == ALPHA_FLOOR  # prior mean 1/3
    assert credit.credit_alpha("hard", credit.Credit(better=2, worse=40)) == ALPHA_FLOOR
    # a clear but young record rises toward the cap; one beyond reasonable doubt is trusted
    # above it (tests/agent/test_trust.py)
    young = credit.credit_alpha("hard", credit.Credit(better=6, worse=0))
    assert ALPHA_FLOOR < young < ALPHA_CAPS["hard"]
    assert credit.credit_alpha("hard", credit.Credit(better=400, worse=0)) == credit.ALPHA_TRUSTED
    mid = credit.credit_alpha("medium", credit.Credit(better=30, worse=20))
    assert ALPHA_FLOOR < mid < ALPHA_CAPS["medium"]
    assert credit.expected_gain(credit.Credit()) < 0


def test_exploration_fades_for_a_model_that_keeps_losing_and_stays_for_one_that_wins():
    C = credit.Credit
    # the posterior chance of beating the rule, exact: Beta(1, 2) -> 1/4; Beta(1, 3) -> 1/8
    assert credit.chance_better(C()) == 0.25
    assert credit.chance_better(C(0, 1)) == 0.125
    assert credit.chance_better(C(3, 0)) == 1 - 3 / 16  # Beta(4, 2): P(Bin(5, .5) <= 3)
    assert credit.explore_rate(C()) == credit.EXPLORE_RATE
    assert credit.explore_rate(C(0, 1)) == credit.EXPLORE_RATE / 2
    assert credit.explore_rate(C(0, 2)) == credit.EXPLORE_RATE / 4
    # never below the floor, so a model can still earn trust
    assert credit.explore_rate(C(0, 50)) == credit.EXPLORE_FLOOR
    # a near-even winner keeps the full rate; one already likely better than the rule explores
    # faster until it is trusted; a well-judged one settles
    assert credit.explore_rate(C(2, 1)) == credit.EXPLORE_RATE
    assert credit.explore_rate(C(10, 2)) == credit.EXPLORE_RATE_PROMISING
    assert credit.explore_rate(C(40, 10)) == credit.EXPLORE_RATE_SETTLED
    rates = [credit.explore_rate(C(0, w)) for w in range(8)]
    assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1]


def test_a_model_whose_calls_are_rarely_judged_is_asked_less():
    """Agreements and ties teach nothing: the rate follows the share of calls judged."""
    C = credit.Credit
    # the same record, earned in 4 calls or in 100 (the other 96 agreed with the rule or tied)
    assert credit.explore_rate(C(0, 1, 0, calls=4)) == credit.EXPLORE_RATE / 2
    rare = credit.explore_rate(C(0, 1, 5, calls=20))
    assert rare == round(credit.EXPLORE_RATE / 2 * (2 / 24) / credit.DISAGREE_REF, 4)
    assert credit.explore_rate(C(0, 1, 20, calls=100)) == credit.EXPLORE_FLOOR
    # a model judged on most calls is never asked more than the full rate for that alone
    assert credit.explore_rate(C(1, 1, 0, calls=2)) <= credit.EXPLORE_RATE
    # the share is shrunk toward the reference: no calls yet is the reference share
    assert C().judged_share == credit.DISAGREE_REF
    assert C(3, 2, 1, calls=6) + C(1, 0, 0, calls=10) == C(4, 2, 1, calls=16)


def test_should_ask_only_with_positive_gain_or_within_the_exploration_budget():
    ask, shadow, why = credit.should_ask(0.1, 0.8, -0.3, 0.0, "t", 0)
    assert not ask and "not worth" in why
    assert credit.should_ask(0.1, 0.8, 0.5, 0.0, "t", 0)[:2] == (True, False)
    assert not credit.should_ask(0.9, 0.8, 0.5, 0.0, "t", 0).ask
    answers = [credit.should_ask(0.9, 0.2, -1, 0.08, "thread", i) for i in range(2000)]
    asked = [a for a in answers if a.ask]
    assert 0.05 < len(asked) / 2000 < 0.11  # the exploration share, deterministic per step
    assert all(a.shadow for a in asked)  # exploration answers are judged, never acted on
    assert answers == [credit.should_ask(0.9, 0.2, -1, 0.08, "thread", i) for i in range(2000)]


def test_exploration_goes_before_the_first_flag_and_stops_after_a_submit_proposal():
    C = credit.Credit
    # a model not behind the rule (no record yet, or ahead, or even) is judged sooner on the
    # report; one that lost more than it won is not
    k = credit.EXPLORE_BEFORE_FIRST_FLAG
    assert credit.report_weight(C()) == credit.report_weight(C(3, 3, 9)) == k > 1.0
    assert credit.report_weight(C(5, 1)) == k and credit.report_weight(C(2, 3)) == 1.0

    def weight(flagged: int, said_submit: bool) -> float:
        return credit.exploration_weight(flagged, said_submit, k)

    assert weight(0, said_submit=False) == k and weight(3, said_submit=False) == 1.0
    assert weight(0, said_submit=True) == weight(3, said_submit=True) == 0.0

    def explored(rate: float) -> int:
        return sum(credit.should_ask(0.9, 0.2, -1, rate, "hard:7:1", i).ask for i in range(4000))

    # the weight multiplies the share of steps explored, deterministically per step
    rate = 0.05
    before_flag, after = explored(rate * weight(0, False)), explored(rate * weight(2, False))
    ratio = before_flag / after
    assert 0.75 * credit.EXPLORE_BEFORE_FIRST_FLAG < ratio < 1.25 * credit.EXPLORE_BEFORE_FIRST_FLAG
    assert explored(rate * weight(2, True)) == 0


def test_the_stake_grows_with_the_record_and_bounds_deciding_calls_in_an_episode():
    C = credit.Credit
    assert credit.stake(C()) == credit.STAKE_MIN
    assert credit.stake(C(8, 1)) == 7 * credit.STAKE_PER_NET_WIN  # chance_better 0.97
    # a near-even record is not yet evidence enough to bet on: the minimum until it firms up
    assert credit.chance_better(C(20, 15)) < credit.STAKE_CONFIDENCE
    assert credit.stake(C(20, 15)) == credit.STAKE_MIN
    assert credit.stake(C(4, 1)) == credit.STAKE_MIN  # chance_better 0.77
    assert credit.stake(C(40, 25, 7)) == 15 * credit.STAKE_PER_NET_WIN  # ties are not evidence
    assert credit.stake(C(30, 10)) is None  # better beyond reasonable doubt: no stake
    assert credit.stake(C(10, 12)) == credit.STAKE_MIN  # losing its disagreements: the minimum
    # the rule is unsure and the LLM's gain is positive: asked while the stake lasts
    assert credit.should_ask(0.1, 0.8, 0.5, 0.0, "t", 0, stake_left=1)[:2] == (True, False)
    spent = credit.should_ask(0.1, 0.8, 0.5, 0.0, "t", 0, stake_left=0)
    assert not spent.ask and "stake" in spent.why
    # a spent stake still leaves the exploration share, as shadows
    later = [credit.should_ask(0.1, 0.8, 0.5, 0.08, "t", i, stake_left=0) for i in range(500)]
    assert 0 < sum(a.ask for a in later) < 60 and all(a.shadow for a in later if a.ask)


def test_credit_table_is_a_bounded_window(memory, monkeypatch):
    monkeypatch.setattr(credit_store, "CREDIT_WINDOW", 3)
    for i in range(5):
        credit_store.record(
            memory, "easy", f"t{i}", credit.Credit(1, i, 0), llm_calls=1, actions=9, alpha=0.2
        )
    credit_store.record(  # a re-run of reflect overwrites its row
        memory, "easy", "t4", credit.Credit(1, 4, 0), llm_calls=1, actions=9, alpha=0.2
    )
    assert len(credit_store.history(memory, "easy")) == 3
    assert credit_store.task_credit(memory, "easy") == credit.Credit(3, 2 + 3 + 4, 0, calls=3)


# ---------------------------------------------------------------------------------- insights
def test_insights_add_upvote_downvote_retire_and_stay_bounded(memory):
    shipped = experience.load_weights()
    weaker_ip = {
        "profile": {**shipped["profile"], "log_shared_ip": 0.1, "core_ip": 0.0},
        "frontier": {**shipped["frontier"], "ip_suspect": 0.0},
    }
    claims = insights.weight_claims(shipped, weaker_ip)
    assert set(claims) == {"ip:weaker"} and "does not share proxies" in claims["ip:weaker"]
    first = insights.update(memory, "hard", "t1", claims)
    assert first == {"added": 1, "upvoted": 0, "downvoted": 0, "retired": 0}
    before = insights.all_insights(memory, "hard")
    # a re-run of reflect (after a kill) reports the same votes and does not vote twice
    assert insights.update(memory, "hard", "t1", claims) == first
    assert insights.all_insights(memory, "hard") == before
    assert insights.update(memory, "hard", "t2", claims)["upvoted"] == 1
    assert insights.active(memory, "hard")[0].importance == 3
    for i in range(3):
        insights.update(memory, "hard", f"d{i}", {})
    assert insights.active(memory, "hard") == []
    assert insights.all_insights(memory, "hard")[0].status == "retired"
    many = {f"k{i}": f"claim {i}" for i in range(insights.MAX_ACTIVE + 5)}
    insights.update(memory, "hard", "t3", many)
    assert len(insights.active(memory, "hard", n=100)) == insights.MAX_ACTIVE


def test_retired_insights_and_vote_reports_stay_bounded(memory, monkeypatch):
    monkeypatch.setattr(insights, "MAX_RETIRED", 2)
    monkeypatch.setattr(insights, "VOTES_KEPT", 3)
    for i in range(6):  # each episode adds its own claim; the others are downvoted, then retired
        insights.update(memory, "hard", f"a{i}", {f"k{i}": f"claim {i}"})
    rows = insights.all_insights(memory, "hard")
    assert [r.key for r in rows if r.status == "retired"] == ["k2", "k3"]  # the newest retired
    assert [r.key for r in rows if r.status == "active"] == ["k4", "k5"]
    kept = [r["thread_id"] for r in memory.db.query("select thread_id from insight_votes")]
    assert sorted(kept) == ["a3", "a4", "a5"]  # the newest reports, even within one second
    assert insights.update(memory, "hard", "a5", {"k5": "claim 5"})["added"] == 1  # re-run


# ------------------------------------------------------------------------------------ expert
def test_expert_spec_is_checked():
    assert parse_expert_spec("expert:0.9") == 0.9
    for bad in ("expert:", "expert:1.5", "expert:x"):
        with pytest.raises(ValueError, match=r"P in \[0, 1\]"):
            parse_expert_spec(bad)


def test_expert_at_p1_is_the_oracle_and_at_p0_ignores_the_truth():
    ep = Episode("medium", 2)
    starting = list(ep.observation()["visible_account_ids"])
    ring = set(ep.network.gang_ids)
    members = [a for a in starting if a in ring]
    innocents = [a for a in ep.network.accounts if a not in ring][:3]
    choices = [f"inspect {a}" for a in innocents] + [f"inspect {members[0]}", "submit"]
    assert oracle_choice(ep, choices) == f"inspect {members[0]}"
    prompts = [f"case {i}" for i in range(200)]
    p1 = {expert_choice(1.0, 0, p, choices, ep) for p in prompts}
    assert p1 == {f"inspect {members[0]}"}
    p0 = [expert_choice(0.0, 0, p, choices, ep) for p in prompts]
    assert set(p0) == set(choices)  # uniform over the menu, truth unused
    assert p0 == [expert_choice(0.0, 0, p, choices, ep) for p in prompts]  # deterministic


def test_expert_without_the_embedded_server_fails_clearly():
    from fakegang.tools.models.expert_llm import ExpertUnavailable, embedded_episode

    with pytest.raises(ExpertUnavailable, match="embedded"):
        embedded_episode("no-such-episode")


def test_rules_alone_still_play_classic_unchanged():
    # the shipped weights stay the default: a refit never leaks into a plain rules run
    assert play_rules("easy", 0)["won"]
