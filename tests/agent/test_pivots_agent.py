"""The agent's pivots: action strings, the rule engine's pivot choice and pivot evidence, and the
trace yields learned from debriefs (bounded, keyed by thread, pinned by the episode)."""

from __future__ import annotations

import pytest

from fakegang.tools.learning import trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules import pivots
from fakegang.tools.rules.actions import format_action, log_form, parse_action, parse_step
from fakegang.tools.rules.engine import propose, score_observation
from fakegang_env.engine import Episode
from fakegang_env.schema import PlainObservation
from fakegang_env.traces import TRACES


# ------------------------------------------------------------------------------ action strings
def test_pivot_actions_round_trip_and_bad_ones_say_why():
    assert format_action("pivot", "u_1", "ip") == "pivot u_1 ip"
    assert parse_step("pivot u_1 ip") == ("pivot", "u_1", "ip")
    assert parse_step("flag u_1") == ("flag", "u_1", None)
    assert parse_step("submit") == ("submit", None, None)
    assert parse_action("pivot u_1 photo") == ("pivot", "u_1")
    assert log_form("pivot u_1 bio") == "PIVOT u_1 bio"
    with pytest.raises(ValueError, match="needs an account id and a trace"):
        parse_step("pivot u_1")
    with pytest.raises(ValueError, match="unknown trace"):
        parse_step("pivot u_1 shoe_size")
    with pytest.raises(ValueError, match="exactly one account id"):
        parse_step("flag u_1 ip")


# ------------------------------------------------------------------------------ the rule engine
def _play(ep: Episode, yields: dict[str, float] | None) -> PlainObservation:
    """The rule engine's policy in-process, pivoting under `yields` (None: never)."""
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    unflagged: set[str] = set()
    for _ in range(ep.task_spec.max_steps * 3):
        if obs.done:
            break
        scores = score_observation(obs, starting, None, yields)
        proposal = propose(obs, starting, scores, unflagged=unflagged, pivot_yields=yields)
        kind, account, trace = parse_step(proposal.action)
        if kind == "unflag":
            unflagged.add(account)
        obs = PlainObservation(**ep.step(kind, account, trace))
        assert obs.last_action_error is None, proposal.action
    return obs


def test_the_engine_pivots_after_a_flag_never_twice_and_not_on_crowd_traces():
    shipped = pivots.shipped_yields("hard")
    obs = _play(Episode("hard", 3), shipped)
    ran = [(p.account_id, p.trace) for p in obs.pivots]
    assert ran, "a classic ring's traces pay: the engine pivots"
    assert len(ran) == len(set(ran))  # never the same (account, trace) twice
    # a trace whose yield is a crowd's is never chosen; the others still are
    dead = {**shipped, "ip": 0.1, "schedule": 0.1}
    obs_dead = _play(Episode("hard", 3), dead)
    assert obs_dead.pivots and not {p.trace for p in obs_dead.pivots} & {"ip", "schedule"}
    # no yields: the classic policy, no pivot at all
    assert _play(Episode("hard", 3), None).pivots == []


def test_the_first_pivot_comes_from_a_flagged_account_on_the_best_trace():
    ep = Episode("hard", 3)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    yields = pivots.shipped_yields("hard")
    for _ in range(200):
        proposal = propose(obs, starting, score_observation(obs, starting), pivot_yields=yields)
        kind, account, trace = parse_step(proposal.action)
        if kind == "pivot":
            break
        obs = PlainObservation(**ep.step(kind, account, trace))
    assert kind == "pivot" and account in obs.flagged_ids
    best = max(TRACES, key=lambda t: (yields[t], -TRACES.index(t)))
    assert trace == best and proposal.action in proposal.choices


def test_pivot_pages_lift_revealed_accounts_by_their_trace_yield():
    ep = Episode("hard", 3)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    member = next(a for a in starting if a in set(ep.network.gang_ids))
    obs = PlainObservation(**ep.step("inspect", member))
    obs = PlainObservation(**ep.step("flag", member))
    obs = PlainObservation(**ep.step("pivot", member, "schedule"))
    page = obs.pivots[-1].account_ids
    assert page
    _, paying = score_observation(obs, starting, None, {t: 10.0 for t in TRACES})
    _, crowd = score_observation(obs, starting, None, {t: 0.05 for t in TRACES})
    baseline = min(paying.values())
    revealed = [a for a in page if a in paying]
    assert all(paying[a] > crowd[a] for a in revealed)
    assert max(paying[a] for a in revealed) > 0.5 > baseline
    ring = set(ep.network.gang_ids)
    assert any(a in ring for a in revealed)


def test_a_pivot_page_judges_its_source():
    ring, n = pivots.ring_guess("hard"), 1000
    # an empty page on a trace the ring shares: a member is almost never alone on it
    assert pivots.source_ratio(10.0, ring, n, 0, []) == pivots.MIN_SOURCE_RATIO
    # ... on a trace the operator killed, an empty page says little
    assert pivots.source_ratio(0.5, ring, n, 0, []) > 0.9
    # a page of inspected members lifts the source, a page of inspected innocents lowers it
    assert pivots.source_ratio(10.0, ring, n, 12, [0.95, 0.9, 0.97]) > 10
    assert pivots.source_ratio(10.0, ring, n, 12, [0.02, 0.05, 0.01]) < 0.5
    # uninspected pages: only the count speaks (not an empty page: no change)
    assert pivots.source_ratio(10.0, ring, n, 12, []) == pytest.approx(1.0)


def test_an_innocent_flagged_then_pivoted_on_to_empty_pages_is_cleared():
    ep = Episode("hard", 3)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    members = set(ep.network.gang_ids)
    net = ep.network
    empty = ["schedule", "bio", "photo"]
    innocent = next(
        a
        for a in starting
        if a not in members and all(not net.traces.matches(net, t, a) for t in empty)
    )
    obs = PlainObservation(**ep.step("inspect", innocent))
    yields = pivots.shipped_yields("hard")
    before, _ = score_observation(obs, starting, None, yields)
    for t in empty:
        obs = PlainObservation(**ep.step("pivot", innocent, t))
    assert all(p.total == 0 for p in obs.pivots)
    after, _ = score_observation(obs, starting, None, yields)
    odds = lambda p: p / (1 - p)  # noqa: E731
    # three empty pages on traces a classic ring shares, each by its own yield
    ring = pivots.ring_guess("hard")
    ratio = 1.0
    for t in empty:
        ratio *= pivots.source_ratio(yields[t], ring, 1000, 0, []) ** pivots.SHARED_DISCOUNT
    assert ratio < 0.2
    assert odds(after[innocent]) == pytest.approx(odds(before[innocent]) * ratio, rel=1e-3)
    # the accounts of a page are not lifted by its source any more
    obs = PlainObservation(**ep.step("pivot", innocent, "ip"))
    page = [a for a in obs.pivots[-1].account_ids if a in starting]
    for a in page:
        obs = PlainObservation(**ep.step("inspect", a))
    plain = obs.model_copy(update={"pivots": []})
    raw, _ = score_observation(plain, starting, None, None)
    judged, _ = score_observation(obs, starting, None, yields)
    assert all(judged[a] == raw[a] for a in page if a != innocent)


def test_the_rule_never_flags_more_than_the_largest_ring():
    """With as many flags as the task's largest ring, a likelier account takes the weakest
    flag's place (unflag first) instead of adding a flag."""
    ep = Episode("easy", 0)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    cap = ep.task_spec.gang_max
    while len(obs.inspected_ids) < cap + 2:
        nxt = next(a for a in obs.visible_account_ids if a not in obs.inspected_ids)
        obs = PlainObservation(**ep.step("inspect", nxt))
    likelihood = {a: 0.6 + 0.01 * i for i, a in enumerate(obs.inspected_ids)}
    for a in list(likelihood)[:cap]:
        obs = PlainObservation(**ep.step("flag", a))
    assert len(obs.flagged_ids) == cap
    weakest = min(obs.flagged_ids, key=likelihood.get)
    proposal = propose(obs, starting, (likelihood, {}))
    assert proposal.action == f"unflag {weakest}"
    assert f"at most {cap}" in proposal.reason
    # a candidate barely above the weakest flag does not displace it
    close = {a: (0.605 if a not in obs.flagged_ids else 0.6) for a in likelihood}
    assert not propose(obs, starting, (close, {})).action.startswith(("flag", "unflag"))


# ------------------------------------------------------------------------------ learned yields
def _pivot(src, trace, page, total):
    return {"account_id": src, "trace": trace, "account_ids": page, "total": total, "at_step": 0}


def test_debriefed_pivots_are_judged_per_trace():
    ring = {"m1", "m2", "m3", "m4"}
    judged = trace_yields.judge_pivots(
        [
            _pivot("m1", "photo", ["m2", "m3", "x1"], 3),
            _pivot("m1", "ip", ["x1", "x2", "m2", "x3"], 40),  # one member in four of forty
            _pivot("x9", "bio", ["m1", "m2"], 2),  # from an innocent: says nothing of the trace
        ],
        ring,
    )
    assert judged["photo"] == trace_yields.TraceRecord("photo", 1, 2.0, 2, 1)
    assert judged["ip"].members == pytest.approx(10.0) and judged["ip"].page_innocents == 3
    assert judged["bio"].pivots == 0 and set(judged) == set(TRACES)


def test_yields_learn_from_debriefs_rewrite_on_rerun_and_stay_bounded(tmp_path):
    memory = Memory(tmp_path / "m.sqlite")
    crowd = {"ip": trace_yields.TraceRecord("ip", 2, 0.2, 0, 40)}
    before = trace_yields.estimate(memory, "hard")
    assert before == pivots.shipped_yields("hard")
    after = trace_yields.record(memory, "hard", "t0", crowd)
    assert after["ip"] < 0.4 * before["ip"] and after["photo"] == before["photo"]
    rows = trace_yields.history(memory, "hard")
    assert len(rows) == len(TRACES) and {r["estimate"] for r in rows if r["trace"] == "ip"} == {
        after["ip"]
    }
    # a re-run of the same episode's reflect rewrites its rows: same estimate, same row count
    assert trace_yields.record(memory, "hard", "t0", crowd) == after
    assert len(trace_yields.history(memory, "hard")) == len(TRACES)
    # the words
    claims = trace_yields.crowd_claims("hard", after)
    assert "IP pivots now return crowds" in claims["pivot:ip:crowds"]
    assert "residential proxies" in claims["pivot:ip:crowds"]
    # bounded: only the newest MAX_EPISODES episodes of a task stay
    for i in range(trace_yields.MAX_EPISODES + 5):
        trace_yields.record(memory, "hard", f"e{i}", {})
    assert len(trace_yields.history(memory, "hard")) == trace_yields.MAX_EPISODES * len(TRACES)
    assert not [r for r in trace_yields.history(memory, "hard") if r["thread_id"] == "t0"]
    memory.close()


def test_the_tactics_estimate_scales_the_prior():
    tactics = {"strength": {"shared_proxies": 0.1, "content_reuse": 1.0}, "sd": {}}
    prior = trace_yields.prior("medium", tactics)
    shipped = pivots.shipped_yields("medium")
    assert prior["ip"] == pytest.approx(0.1 * shipped["ip"], abs=1e-3)
    assert prior["photo"] == shipped["photo"] and prior["creation"] == shipped["creation"]


# ------------------------------------------------------------------------------ the LLM's side
def _member_pivoted_on_schedule() -> tuple[Episode, set[str], str, str, PlainObservation]:
    """Hard seed 3 after inspecting a starting member and pivoting on its schedule:
    (episode, ring, member, a starting innocent, the observation)."""
    ep = Episode("hard", 3)
    ring = set(ep.network.gang_ids)
    obs = PlainObservation(**ep.observation())
    member = next(a for a in obs.visible_account_ids if a in ring)
    innocent = next(a for a in obs.visible_account_ids if a not in ring)
    ep.step("inspect", member)
    obs = PlainObservation(**ep.step("pivot", member, "schedule"))
    return ep, ring, member, innocent, obs


def test_the_case_shows_pivots_and_the_expert_values_a_paying_pivot():
    from fakegang.tools.learning.credit import action_value
    from fakegang.tools.models.expert_llm import oracle_choice
    from fakegang.tools.models.prompting import load_prompt, render_case

    ep, ring, member, innocent, obs = _member_pivoted_on_schedule()
    likelihood, frontier = score_observation(obs, obs.visible_account_ids[:12])
    case = render_case(obs, likelihood, frontier)
    assert f"Pivots: schedule@{member}={obs.pivots[0].total}" in case
    assert "pivot <id> <trace>" in load_prompt("decide_system")
    # judged by the debrief like inspecting its source; the expert counts the new members
    assert action_value(f"pivot {member} ip", ring, set(), 0.9) == 0.5
    assert action_value(f"pivot {innocent} ip", ring, set(), 0.9) == -0.5
    assert action_value(f"pivot {member} ip", ring, set(), 0.9, pivot_new_members=0) == -0.5
    assert action_value(f"pivot {member} ip", ring, set(), 0.9, pivot_new_members=5) == 0.9
    # a member's pivot on a trace whose page holds unseen members beats inspecting an innocent
    fresh = Episode("hard", 3)
    fresh.step("inspect", member)
    choice = oracle_choice(fresh, [f"inspect {innocent}", f"pivot {member} schedule"])
    assert choice == f"pivot {member} schedule"


def test_the_expert_values_a_pivot_as_the_debrief_judges_it():
    """Members a page shows that are visible but not inspected count for both: an oracle that
    counted only members not yet visible passed over pivots the judge then counted against it."""
    from fakegang.tools.learning import credit
    from fakegang.tools.models.expert_llm import oracle_choice

    ep, ring, member, innocent, obs = _member_pivoted_on_schedule()
    page = obs.pivots[0].account_ids
    shown = [a for a in page if a in ring and a != member]
    assert shown and not set(shown) & set(obs.inspected_ids)  # visible now, not inspected
    pivot, inspect = f"pivot {member} schedule", f"inspect {innocent}"
    pages = {(member, "schedule"): page}
    judged = {
        a: credit._value(a, ring, set(), set(obs.inspected_ids), 0.9, pages)
        for a in (pivot, inspect)
    }
    assert judged[pivot] > judged[inspect]
    assert oracle_choice(ep, [inspect, pivot]) == pivot


def test_a_trusted_llm_gets_a_wide_menu():
    ep = Episode("hard", 3)
    obs = PlainObservation(**ep.observation())
    starting = list(obs.visible_account_ids)
    for a in starting[:6]:
        obs = PlainObservation(**ep.step("inspect", a))
    scores = score_observation(obs, starting)
    narrow = propose(obs, starting, scores, pivot_yields=pivots.shipped_yields("hard"))
    wide = propose(
        obs, starting, scores, pivot_yields=pivots.shipped_yields("hard"), wide_menu=True
    )
    assert wide.action == narrow.action and wide.confidence == narrow.confidence
    flags = {c.split()[1] for c in wide.choices if c.startswith("flag ")}
    assert flags == set(starting[:6]) - set(obs.flagged_ids)  # every inspected account
    assert len(wide.choices) > len(narrow.choices) and set(narrow.choices) <= set(wide.choices)
    # inspections reach past the engine's own top of the frontier, best first
    from fakegang.tools.rules.engine import FRONTIER_TOP, WIDE_MENU

    frontier = scores[1]
    inspects = [c.split()[1] for c in wide.choices if c.startswith("inspect ")]
    assert len(frontier) > WIDE_MENU["inspect"] > FRONTIER_TOP
    assert len(inspects) == WIDE_MENU["inspect"]
    assert [frontier[x] for x in inspects] == sorted(frontier[x] for x in inspects)[::-1]


def test_the_http_client_sends_the_trace(env_url):
    from fakegang.tools.env_client import EnvClient

    local = Episode("hard", 3)
    member = next(a for a in local.network.starting_ids if a in set(local.network.gang_ids))
    local.step("inspect", member)
    expected = local.step("pivot", member, "bio")["pivots"]
    with EnvClient(env_url) as client:
        client.reset("hard", 3, episode_id="pivot-client")
        client.step("pivot-client", "inspect", member, 0)
        obs = client.step("pivot-client", "pivot", member, 1, "bio")
        assert obs.last_action_error is None
        assert [p.model_dump() for p in obs.pivots] == expected
        # a retried index is answered, not re-applied
        again = client.step("pivot-client", "pivot", member, 1, "bio")
        assert again.action_count == obs.action_count == 2
