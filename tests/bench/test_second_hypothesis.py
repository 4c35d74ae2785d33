"""bench/experiments/second_hypothesis.py: the friend-group check and the next hypothesis."""

from __future__ import annotations

from agent_fixtures import observation, profile, ring_member

from bench.experiments import campaign_curves
from bench.experiments.second_hypothesis import Hypotheses, friend_group, summary
from fakegang.tools.learning import trace_yields
from fakegang_env.engine import Episode


def test_a_core_on_its_own_household_ip_is_a_friend_group_a_proxy_core_is_not() -> None:
    friends = [
        profile(f"u_f{i}", [], ip_cluster_id="ip_home", shared_ip_count=4) for i in range(4)
    ]  # four of the five accounts on the household IP inspected: one stranger
    ring = [ring_member(f"u_r{i}", [], shared_ip_count=12) for i in range(4)]  # on ip_proxy
    obs = observation([*friends, *ring], visible=[p.account_id for p in [*friends, *ring]])
    assert friend_group(obs, [p.account_id for p in friends], 4.0)
    assert not friend_group(obs, [p.account_id for p in ring], 4.0)
    assert not friend_group(obs, [p.account_id for p in friends], 0.0)  # 0: never fires
    lone = [profile(f"u_l{i}", []) for i in range(4)]  # on no shared IP: not judged
    obs = observation(lone, visible=[p.account_id for p in lone])
    assert not friend_group(obs, [p.account_id for p in lone], 4.0)


def test_with_the_check_off_it_plays_as_the_plain_player() -> None:
    yields = trace_yields.prior("hard", None)
    plain, start = campaign_curves.play(Episode.for_round("hard", 100, 0, "mixed"), None, yields)
    player = Hypotheses(strangers=0.0)
    mine, mine_start = player.play(Episode.for_round("hard", 100, 0, "mixed"), None, yields)
    assert mine_start == start
    assert (mine.flagged_ids, mine.step_count, mine.message) == (
        plain.flagged_ids,
        plain.step_count,
        plain.message,
    )
    assert player.firings == []


def test_summary_counts_firings_seeds_and_wins_per_mode() -> None:
    def result(mode, wins, firings):
        return {"mode": mode, "rounds": [{"won": w} for w in wins], "firings": firings}

    fired = {"members": 0, "budget_left": 40, "seed_members": [True], "won": True}
    results = [
        result("prior", [True, False], []),
        result("learning", [True, True], [fired]),
        result("learning", [False], [{**fired, "seed_members": [False], "won": False}]),
    ]
    s = summary(results, ["prior", "learning"])
    assert (s["prior"]["won"], s["prior"]["rounds"], s["prior"]["firings"]) == (1, 2, 0)
    learning = s["learning"]
    assert (learning["won"], learning["rounds"], learning["win_rate"]) == (2, 3, 0.667)
    assert (learning["firings"], learning["seeds"], learning["seeds_members"]) == (2, 2, 1)
    assert (learning["won_after_firing"], learning["dropped_cores_with_a_member"]) == (1, 0)
    assert learning["budget_left"] == [40, 40]


def test_a_friend_group_core_is_dropped_and_the_next_hypothesis_grown_from_the_report(
    tmp_path,
) -> None:
    """Hard `diversified` campaign 101, round 0, the learning agent's starting weights: the core
    at the fourth flag is a friend group (no member), so it is unflagged for good and the
    best-scored starting account left is flagged and held."""
    from pathlib import Path

    from fakegang.tools.learning import experience
    from fakegang.tools.memory.store import Memory

    memory = Memory(Path(tmp_path) / "memory.sqlite")
    weights = experience.latest_version(memory, "hard").as_rule_weights()
    memory.close()
    yields = trace_yields.prior("hard", None)
    ep = Episode.for_round("hard", 101, 0, "diversified")
    player = Hypotheses(strangers=4.0, seeds=1, plain_engine=True)  # as measured
    obs, starting = player.play(ep, weights, yields)
    [fired] = player.firings
    assert fired["members"] == 0 and len(fired["core"]) == 4 and fired["budget_left"] > 0
    assert not set(fired["core"]) & set(obs.flagged_ids)  # never flagged again
    [seed] = fired["seeds"]
    assert seed in starting and seed not in fired["core"]
    assert seed in obs.flagged_ids  # held: the rule did not unflag it
    off = Hypotheses(strangers=0.0, plain_engine=True)
    plain, _ = off.play(Episode.for_round("hard", 101, 0, "diversified"), weights, yields)
    assert set(fired["core"]) <= set(plain.flagged_ids)  # without the check it kept that core
