"""bench/experiments/adaptive_losses.py: what the lost rounds of an adaptive campaign share."""

from __future__ import annotations

from bench.experiments.adaptive_losses import campaign, summary


def test_summary_counts_only_the_lost_rounds() -> None:
    def row(won, member, lookalike, inspected, right, false):
        return {"won": won, "member_after_report": member, "best_lookalike_after_report":
                lookalike, "members_inspected": inspected, "right_flags": right,
                "false_flags": false}  # fmt: skip

    rows = [
        row(True, 0.9, 0.1, 10, 10, []),
        row(False, 0.3, 0.6, 1, 0, ["community", "community", "vpn_user"]),
        row(False, 0.7, 0.2, 5, 4, ["community"]),
    ]
    s = summary(rows)
    assert (s["rounds"], s["lost"], s["member_unrecognised"], s["member_below_a_lookalike"]) == (
        3, 2, 1, 1,
    )  # fmt: skip
    assert (s["at_most_two_members_inspected"], s["no_right_flag"], s["false_flags"]) == (1, 1, 4)
    assert s["false_flags_by_role"] == {"community": 3, "vpn_user": 1}


def test_a_played_campaign_gives_a_row_per_round_from_the_debrief(tmp_path) -> None:
    rows = campaign("hard", 101, 2, str(tmp_path))
    assert [r["round"] for r in rows] == [0, 1]
    for r in rows:
        assert 0 <= r["right_flags"] <= r["members_inspected"] <= r["ring"]
        assert 0.0 <= r["member_after_report"] <= 1.0
        assert r["best_lookalike_role"] != "gang" and "gang" not in r["false_flags"]
        assert set(r["weakened"]) <= {"creation_burst", "posting_sync", "content_reuse",
                                      "shared_proxies", "ring_density", "lockstep_cofollow",
                                      "camouflage", "renames", "evasion"}  # fmt: skip
