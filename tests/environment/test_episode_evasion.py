"""The ring's evasion (when it fires, what it changes) and the engine's determinism."""

from __future__ import annotations

import pytest
from tiny_network import tiny

from fakegang_env.engine import Episode

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
