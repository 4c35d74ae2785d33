"""bench/experiments/adaptive_losses.py: what the lost rounds of an adaptive campaign share."""

from __future__ import annotations

from bench.experiments.adaptive_losses import (
    CORE_AT_FLAGS,
    campaign,
    cofollow,
    ip_strangers,
    rank_of,
    summary,
)
from fakegang_env.schema import AccountProfile, PlainObservation


def test_summary_counts_only_the_lost_rounds() -> None:
    def row(won, member, lookalike, inspected, right, false, rank, core, strangers):
        return {"won": won, "member_after_report": member, "best_lookalike_after_report":
                lookalike, "members_inspected": inspected, "right_flags": right,
                "false_flags": false, "member_rank": rank, "member_rank_by_prior": 0,
                "core_members": core, "core_ip_strangers": strangers}  # fmt: skip

    rows = [
        row(True, 0.9, 0.1, 10, 10, [], 0, 4, 8.0),
        row(False, 0.3, 0.6, 1, 0, ["community", "community", "vpn_user"], 1, 0, 2.0),
        row(False, 0.7, 0.2, 5, 4, ["community"], 0, 3, None),
    ]
    s = summary(rows)
    assert (s["rounds"], s["lost"], s["member_unrecognised"], s["member_below_a_lookalike"]) == (
        3, 2, 1, 1,
    )  # fmt: skip
    assert (s["at_most_two_members_inspected"], s["no_right_flag"], s["false_flags"]) == (1, 1, 4)
    assert s["false_flags_by_role"] == {"community": 3, "vpn_user": 1}
    assert (s["member_ranked_first_yet_lost"], s["member_ranked_first"]) == (1, 2)
    assert s["core_ip_strangers"] == {
        "ring": {"cores": 2, "no_value": 1, "range": [8.0, 8.0], "quartiles": [8.0, 8.0, 8.0]},
        "wrong": {"cores": 1, "no_value": 0, "range": [2.0, 2.0], "quartiles": [2.0, 2.0, 2.0]},
    }
    assert s["core_cofollow"]["ring"] == {"cores": 2, "no_value": 2, "range": [], "quartiles": []}


def _profile(account_id: str, ip: str, shared: int) -> AccountProfile:
    return AccountProfile(
        account_id=account_id, follower_count=1, following_count=1, post_count=1,
        avg_post_hour=12.0, account_age_days=100, photo_reuse_score=0.0,
        bio_template_score=0.0, comment_repeat_score=0.0, ip_cluster_id=ip,
        shared_ip_count=shared, name_change_count=0, mutual_follow_rate=0.0,
        visible_follows=[], inspected_at_step=0,
    )  # fmt: skip


def test_ip_strangers_count_the_accounts_on_an_ip_nobody_inspected() -> None:
    # a household of three, all inspected; a proxy with nine others, one of them inspected
    seen = [_profile(a, "home", 2) for a in ("h1", "h2", "h3")]
    seen += [_profile("p1", "proxy", 9), _profile("p2", "proxy", 9), _profile("o", "own", 0)]
    obs = PlainObservation.model_construct(visible_accounts=seen)
    assert ip_strangers(obs, ["h1", "h2"]) == 0.0
    assert ip_strangers(obs, ["p1", "p2"]) == 8.0
    assert ip_strangers(obs, ["h1", "p1", "o"]) == 4.0  # an account on its own IP is left out
    assert ip_strangers(obs, ["o"]) is None


def test_cofollow_is_the_mean_jaccard_of_follows_outside_the_core() -> None:
    edges = {"a": ["b", "x", "y"], "b": ["a", "x"], "c": ["z"]}
    obs = PlainObservation.model_construct(graph_edges=edges)
    assert cofollow(obs, ["a", "b"]) == 0.5  # {x, y} and {x}
    assert cofollow(obs, ["a", "b", "c"]) == round((0.5 + 0 + 0) / 3, 3)
    assert cofollow(obs, ["a", "unseen"]) is None


def test_rank_of_puts_the_best_scored_first() -> None:
    assert rank_of({"a": 0.2, "b": 0.9, "c": 0.5}, "b") == 0
    assert rank_of({"a": 0.2, "b": 0.9, "c": 0.5}, "a") == 2


def test_a_played_campaign_gives_a_row_per_round_from_the_debrief(tmp_path) -> None:
    rows = campaign("hard", 101, 2, str(tmp_path))
    assert [r["round"] for r in rows] == [0, 1]
    for r in rows:
        assert 0 <= r["right_flags"] <= r["members_inspected"] <= r["ring"]
        assert 0.0 <= r["member_after_report"] <= 1.0
        assert 0 <= r["member_rank"] < 20 and 0 <= r["member_rank_by_prior"] < 20
        assert r["core_members"] is None or 0 <= r["core_members"] <= CORE_AT_FLAGS
        assert r["best_lookalike_role"] != "gang" and "gang" not in r["false_flags"]
        assert set(r["weakened"]) <= {"creation_burst", "posting_sync", "content_reuse",
                                      "shared_proxies", "ring_density", "lockstep_cofollow",
                                      "camouflage", "renames", "evasion"}  # fmt: skip


def test_a_campaign_of_another_tactics_reads_the_weakened_channels_from_its_schedule(
    tmp_path,
) -> None:
    rows = campaign("hard", 101, 1, str(tmp_path), "diversified")
    [row] = rows
    assert row["weakened"] == ["content_reuse", "posting_sync", "shared_proxies"]
    assert 0 <= row["right_flags"] <= row["members_inspected"] <= row["ring"]
