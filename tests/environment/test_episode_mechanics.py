"""Mechanics of every action on hand-made networks (exact values) and on generated ones.

The ring's evasion and determinism are test_episode_evasion.py.
"""

from __future__ import annotations

import pytest
from tiny_network import tiny, unchanged

from fakegang_env.engine import Episode
from fakegang_env.schema import ActionType, PlainObservation


def test_initial_observation_matches_schema_exactly():
    ep = Episode.from_network(tiny(), episode_id="e1")
    obs = ep.observation()
    assert set(obs) == set(PlainObservation.model_fields)
    PlainObservation.model_validate(obs)
    assert obs["visible_account_ids"] == ["g1", "x1"]
    assert obs["reward"] is None and obs["done"] is False
    assert obs["steps_remaining"] == 30 and obs["action_count"] == 0
    assert obs["grader_score"] is None and ep.grader() is None


def test_inspect_costs_one_step_and_reveals_follows():
    ep = Episode.from_network(tiny())
    obs = ep.step("inspect", "g1")
    assert obs["step_count"] == 1 and obs["action_count"] == 1
    assert obs["reward"] == -0.01 and obs["episode_return"] == -0.01
    assert obs["visible_account_ids"] == ["g1", "x1", "g2", "c1", "x2"]
    assert obs["inspected_ids"] == ["g1"]
    (prof,) = obs["visible_accounts"]
    assert prof["shared_ip_count"] == 2  # g2 and x1 share ip_P
    assert prof["mutual_follow_rate"] == 0.3333  # of g2, c1, x2 only g2 follows back
    assert prof["visible_follows"] == ["g2", "c1", "x2"]
    assert prof["inspected_at_step"] == 0
    assert obs["graph_edges"] == {"g1": ["g2", "c1", "x2"]}
    assert obs["last_action_error"] is None
    PlainObservation.model_validate(obs)


def test_reinspection_costs_again_and_refreshes_snapshot():
    ep = Episode.from_network(tiny())
    ep.step("inspect", "g1")
    ep.network.accounts["g1"].avg_post_hour = 3.5  # as if the ring had moved
    assert ep.observation()["visible_accounts"][0]["avg_post_hour"] == 10.0  # stale snapshot
    obs = ep.step("inspect", "g1")
    assert obs["step_count"] == 2 and obs["inspected_ids"] == ["g1"]
    assert obs["visible_accounts"][0]["avg_post_hour"] == 3.5
    assert obs["visible_accounts"][0]["inspected_at_step"] == 1
    assert obs["message"].startswith("Re-inspected")


def test_investigate_reveals_two_hops_both_directions_without_profiles():
    ep = Episode.from_network(tiny())
    obs = ep.step("investigate_network", "g1")
    assert obs["step_count"] == 2 and obs["reward"] == -0.02
    # hop 1: g2 c1 x2 (follows), x1 (follower); hop 2: g3 (via g2), x3 (via c1); x4 is 3 hops
    assert set(obs["visible_account_ids"]) == {"g1", "x1", "g2", "c1", "x2", "g3", "x3"}
    assert obs["visible_account_ids"][:2] == ["g1", "x1"]
    assert obs["investigated_ids"] == ["g1"]
    assert obs["inspected_ids"] == [] and obs["visible_accounts"] == []


def test_investigate_needs_two_steps_left():
    ep = Episode.from_network(tiny())
    for _ in range(29):
        ep.step("inspect", "x1")
    before = ep.observation()
    obs = ep.step("investigate_network", "g1")
    assert obs["last_action_error"] and "2 steps" in obs["message"]
    unchanged(before, obs)
    assert obs["reward"] == 0.0 and not obs["done"]


def test_flag_cascade_marks_visible_follows_and_same_ip():
    ep = Episode.from_network(tiny())
    ep.step("investigate_network", "g1")
    obs = ep.step("flag", "g1")
    assert obs["step_count"] == 2 and obs["reward"] == 0.0 and obs["action_count"] == 2
    assert obs["flagged_ids"] == ["g1"]
    # follows g2 c1 x2 + same IP g2 x1; g3 (other proxy) and the flagged account are not suspect
    assert set(obs["suspect_ids"]) == {"g2", "c1", "x2", "x1"}
    obs = ep.step("flag", "g2")
    assert "g2" not in obs["suspect_ids"]
    assert "g3" in obs["suspect_ids"]  # g2 follows g3


def test_flag_cascade_ignores_invisible_accounts():
    ep = Episode.from_network(tiny())
    obs = ep.step("flag", "g1")  # g2 c1 x2 not visible yet; x1 shares the IP and is visible
    assert obs["suspect_ids"] == ["x1"]
    obs = ep.step("inspect", "g1")  # g2 becomes visible later: no retroactive mark
    assert obs["suspect_ids"] == ["x1"]


def test_unflag_removes_flag_and_is_free():
    ep = Episode.from_network(tiny())
    ep.step("flag", "g1")
    obs = ep.step("unflag", "g1")
    assert obs["flagged_ids"] == [] and obs["step_count"] == 0 and obs["action_count"] == 2


@pytest.mark.parametrize(
    ("action", "account_id", "needle"),
    [
        ("inspect", None, "no account_id"),
        ("investigate_network", None, "no account_id"),
        ("flag", None, "no account_id"),
        ("unflag", None, "no account_id"),
        ("inspect", "", "no account_id"),
        ("inspect", "x4", "not visible"),
        ("inspect", "u_nosuch", "not visible"),
        ("investigate_network", "g3", "not visible"),
        ("flag", "g2", "not visible"),
        ("unflag", "x1", "not flagged"),
    ],
)
def test_illegal_actions_change_nothing(action, account_id, needle):
    ep = Episode.from_network(tiny())
    ep.step("inspect", "x1")
    before = ep.observation()
    obs = ep.step(action, account_id)
    assert needle in obs["message"] and obs["last_action_error"] == obs["message"]
    assert obs["reward"] == 0.0 and obs["action_count"] == 1 and ep.action_count == 1
    unchanged(before, obs)
    PlainObservation.model_validate(obs)


def test_flag_twice_is_illegal():
    ep = Episode.from_network(tiny())
    ep.step("flag", "g1")
    obs = ep.step("flag", "g1")
    assert "already flagged" in obs["last_action_error"] and obs["action_count"] == 1


def test_unknown_action_type_raises_value_error():
    ep = Episode.from_network(tiny())
    with pytest.raises(ValueError, match="valid: inspect"):
        ep.step("explode", "g1")
    with pytest.raises(ValueError):
        ep.step("inspect", 12)  # type: ignore[arg-type]
    assert ep.action_count == 0


def test_action_type_enum_accepted():
    ep = Episode.from_network(tiny())
    obs = ep.step(ActionType.INSPECT, "g1")
    assert obs["step_count"] == 1


def test_submit_win_exact_reward_message_and_grader():
    ep = Episode.from_network(tiny(), episode_id="e9")
    ep.step("investigate_network", "g1")
    for g in ("g1", "g2", "g3"):
        ep.step("flag", g)
    obs = ep.step("submit", None)
    # 3 TP + win 5 + full ring 3 + efficiency 1 = 12; step costs -0.02
    assert obs["reward"] == 12.0 and obs["episode_return"] == 11.98
    assert obs["message"] == "[WIN] TP=3 FP=0 FN=0 Recall=1.00 Precision=1.00 Episode reward=11.98"
    assert obs["done"] and obs["tp"] == 3 and obs["fp"] == 0 and obs["fn"] == 0
    assert obs["recall"] == 1.0 and obs["precision"] == 1.0
    assert obs["grader_score"] == 0.9933  # 0.55 + 0.20 + 0.15 + 0.10 * 28/30
    assert ep.grader() == {
        "task": "easy",
        "episode_id": "e9",
        "score": 0.9933,
        "won": True,
        "tp": 3,
        "fp": 0,
        "fn": 0,
        "recall": 1.0,
        "precision": 1.0,
        "steps_used": 2,
    }
    PlainObservation.model_validate(obs)


def test_submit_ignores_account_id():
    ep = Episode.from_network(tiny())
    obs = ep.step("submit", "g1")
    assert obs["done"] and obs["message"].startswith("[LOSS] TP=0 FP=0 FN=3")


def test_forced_submit_when_budget_runs_out():
    ep = Episode.from_network(tiny())
    for _ in range(29):
        obs = ep.step("inspect", "g1")
        assert not obs["done"]
    obs = ep.step("inspect", "g1")
    # terminal: -0.3*3 FN - 2.0 forced = -2.9; this step: -0.01 - 2.9
    assert obs["done"] and obs["reward"] == -2.91 and obs["episode_return"] == -3.2
    assert obs["message"] == "[LOSS] TP=0 FP=0 FN=3 Recall=0.00 Precision=0.00 Episode reward=-3.20"
    assert obs["steps_remaining"] == 0 and obs["grader_score"] == 0.0


def test_forced_submit_by_investigate_crossing_the_end():
    ep = Episode.from_network(tiny())
    for _ in range(28):
        ep.step("inspect", "x1")
    obs = ep.step("investigate_network", "g1")
    assert obs["done"] and obs["step_count"] == 30


def test_acting_after_the_end_changes_nothing():
    ep = Episode.from_network(tiny())
    ep.step("flag", "g1")
    done = ep.step("submit", None)
    for action, aid in (("inspect", "g1"), ("submit", None), ("flag", "x1")):
        obs = ep.step(action, aid)
        assert obs["done"] and "already over" in obs["last_action_error"]
        assert obs["action_count"] == 2 and obs["reward"] == 0.0
        assert obs["grader_score"] == done["grader_score"] and obs["tp"] == 1
        unchanged(done, obs)


def test_state_fields():
    ep = Episode.from_network(tiny(), episode_id="s1")
    ep.step("inspect", "g1")
    st = ep.state()
    assert st == {
        "episode_id": "s1",
        "task": "easy",
        "seed": 7,
        "step_count": 1,
        "action_count": 1,
        "max_steps": 30,
        "steps_remaining": 29,
        "episode_return": -0.01,
        "done": False,
        "evasion_count": 0,
        "network_size": 9,
    }
