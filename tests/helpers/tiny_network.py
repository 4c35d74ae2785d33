"""A 9-account network whose every reachable set can be checked by hand, for the engine's
mechanics tests (test_episode_mechanics.py, test_episode_evasion.py)."""

from __future__ import annotations

from fakegang_env.network import Account, Network

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
