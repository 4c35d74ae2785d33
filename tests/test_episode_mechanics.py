"""Mechanics of every action on hand-made networks (exact values) and on generated ones."""

from __future__ import annotations

import pytest

from fakegang_env.engine import Episode
from fakegang_env.network import Account, Network
from fakegang_env.schema import ActionType, PlainObservation

ROLES = {"g1": "gang", "g2": "gang", "g3": "gang", "c1": "customer", "v1": "vpn_user"}
IPS = {"g1": "ip_P", "g2": "ip_P", "g3": "ip_Q", "x1": "ip_P", "v1": "ip_V"}
FOLLOWS = {
    "g1": ["g2", "c1", "x2"],
    "g2": ["g1", "g3", "c1"],
    "g3": ["g2"],
    "c1": ["x3"],
    "x1": ["g1"],
    "x2": [],
    "x3": ["x4"],
    "x4": [],
    "v1": [],
}


def tiny(task: str = "easy", starting: tuple[str, ...] = ("g1", "x1")) -> Network:
    """A 9-account network whose every reachable set can be checked by hand."""
    accounts = {}
    for i, (aid, follows) in enumerate(FOLLOWS.items()):
        role = ROLES.get(aid, "ordinary")
        accounts[aid] = Account(
            account_id=aid,
            role=role,
            is_gang=role == "gang",
            follower_count=100 + i,
            following_count=200 + i,
            post_count=50 + i,
            avg_post_hour=10.0 + i,
            account_age_days=300 + i,
            photo_reuse_score=0.1,
            bio_template_score=0.2,
            comment_repeat_score=0.3,
            ip_cluster_id=IPS.get(aid, f"ip_{aid}"),
            name_change_count=0,
            follows=list(follows),
        )
    return Network(
        task=task,
        seed=7,
        max_steps={"easy": 30, "medium": 50, "hard": 80}[task],
        accounts=accounts,
        gang_ids=["g1", "g2", "g3"],
        starting_ids=list(starting),
        reported_id="g1",
    )


def unchanged(before: dict, after: dict) -> None:
    """Everything but message / error / reward is identical."""
    skip = {"message", "last_action_error", "reward"}
    assert {k: v for k, v in before.items() if k not in skip} == {
        k: v for k, v in after.items() if k not in skip
    }


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


# -- evasion --------------------------------------------------------------------------------------


def test_evasion_fires_on_crossing_and_snapshots_go_stale():
    ep = Episode.from_network(tiny("medium"))
    ep.step("inspect", "g1")
    old_hour = ep.observation()["visible_accounts"][0]["avg_post_hour"]
    for _ in range(23):
        obs = ep.step("inspect", "x1")
    assert obs["step_count"] == 24 and obs["evasion_count"] == 0 and not obs["evasion_triggered"]
    obs = ep.step("inspect", "x1")  # 24 -> 25 crosses the scheduled step
    assert obs["evasion_count"] == 1 and obs["evasion_triggered"]
    assert "ring adapted" in obs["message"]
    net = ep.network
    gang = ("g1", "g2", "g3")
    hours = {g: net.accounts[g].avg_post_hour for g in gang}
    assert hours["g1"] != old_hour
    assert obs["visible_accounts"][0]["avg_post_hour"] == old_hour  # stale until re-inspected
    assert sum(net.accounts[g].name_change_count for g in gang) >= 1
    assert any(net.accounts[g].ip_cluster_id == "ip_V" for g in gang)  # rotated onto a VPN exit
    intra_after = sum(f in gang for g in gang for f in net.accounts[g].follows)
    assert intra_after < 4  # g1->g2, g2->g1, g2->g3, g3->g2 before; at least one dropped
    obs = ep.step("inspect", "g1")
    assert obs["visible_accounts"][0]["avg_post_hour"] == hours["g1"]
    assert obs["visible_accounts"][0]["inspected_at_step"] == 25
    assert obs["evasion_count"] == 1  # fires once


def test_evasion_hours_move_together():
    ep = Episode("medium", 3)
    net = ep.network
    before = {g: net.accounts[g].avg_post_hour for g in net.gang_ids}
    visible = ep.observation()["visible_account_ids"][0]
    for _ in range(25):
        ep.step("inspect", visible)
    shifts = []
    for g in net.gang_ids:
        d = (net.accounts[g].avg_post_hour - before[g]) % 24.0
        shifts.append(d if d <= 12 else d - 24.0)
    assert all(abs(s) >= 1.0 for s in shifts)
    assert max(shifts) - min(shifts) < 1.5  # the ring shifts as one


def test_evasion_fires_when_investigate_jumps_over_the_step():
    ep = Episode("medium", 1)
    first = ep.observation()["visible_account_ids"][0]
    for _ in range(24):
        ep.step("inspect", first)
    obs = ep.step("investigate_network", first)  # 24 -> 26
    assert obs["step_count"] == 26 and obs["evasion_count"] == 1


def test_hard_evasion_fires_three_times_and_never_on_free_actions():
    ep = Episode("hard", 2)
    first = ep.observation()["visible_account_ids"][0]
    counts = []
    for _ in range(70):
        counts.append(ep.step("inspect", first)["evasion_count"])
        ep.step("flag", first)
        ep.step("unflag", first)
    assert counts[18] == 0 and counts[19] == 1 and counts[39] == 2 and counts[59] == 3
    assert counts[-1] == 3


def test_easy_has_no_evasion():
    ep = Episode("easy", 0)
    first = ep.observation()["visible_account_ids"][0]
    for _ in range(29):
        obs = ep.step("inspect", first)
    assert obs["evasion_count"] == 0


# -- determinism and speed --------------------------------------------------------------------


def _play(task: str, seed: int) -> list[dict]:
    ep = Episode(task, seed, episode_id="same")
    out = [ep.observation()]
    i = 0
    while not ep.done and i < 60:
        vis = out[-1]["visible_account_ids"]
        kind = ("inspect", "investigate_network", "flag")[i % 3]
        out.append(ep.step(kind, vis[(7 * i) % len(vis)]))
        i += 1
    out.append(ep.step("submit", None))
    return out


@pytest.mark.parametrize("task", ["easy", "medium", "hard"])
def test_same_seed_and_actions_give_identical_observations(task):
    a, b = _play(task, 11), _play(task, 11)
    assert a == b
    assert a[0] != _play(task, 12)[0]


def test_observations_are_independent_copies():
    ep = Episode.from_network(tiny())
    obs = ep.step("inspect", "g1")
    obs["visible_account_ids"].append("zzz")
    obs["visible_accounts"][0]["visible_follows"].clear()
    obs["graph_edges"]["g1"].clear()
    fresh = ep.observation()
    assert "zzz" not in fresh["visible_account_ids"]
    assert fresh["visible_accounts"][0]["visible_follows"] == ["g2", "c1", "x2"]
    assert fresh["graph_edges"]["g1"] == ["g2", "c1", "x2"]


_CROSS_PROCESS = """
import hashlib, json
from fakegang_env.policies import run_policy
from fakegang_env.engine import Episode
ep = Episode("hard", 7)
obs = ep.observation()
for i in range(40):
    v = obs["visible_account_ids"]
    obs = ep.step(("inspect", "investigate_network", "flag")[i % 3], v[(5 * i) % len(v)])
runs = [run_policy(p, "medium", 3) for p in ("random", "naive", "oracle")]
print(hashlib.sha256(json.dumps([obs, runs], sort_keys=True).encode()).hexdigest())
"""


def test_determinism_does_not_depend_on_hash_randomisation():
    import os
    import subprocess
    import sys

    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", _CROSS_PROCESS], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1
