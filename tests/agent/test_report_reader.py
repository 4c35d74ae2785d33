"""The report reader: its JSON trees, its choice on held-out reports, and the engine's use of it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from agent_fixtures import observation, profile, ring_member

from bench.fits import fit_report_reader
from bench.fits.fit_report_reader import (
    ADAPTIVE_ROUNDS,
    HELD_OUT_BASE,
    HELD_OUT_CAMPAIGNS,
    SEED_BASE,
    adaptive_reports,
    export,
    read_report,
    reading_with,
    report,
    top1,
)
from fakegang.tools.learning import experience, trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules import report_reader
from fakegang.tools.rules.actions import parse_step
from fakegang.tools.rules.engine import score_observation
from fakegang.tools.rules.player import play_episode
from fakegang_env.engine import Episode
from fakegang_env.tactics import ADAPTIVE, TACTICS_NAMES
from fakegang_env.tasks import get_task


def test_the_json_trees_score_as_scikit_learn_does() -> None:
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(report_reader.FEATURES)))
    y = (x[:, 0] * x[:, 9] + x[:, 1] > 0.3).astype(int)
    model = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0).fit(x, y)
    trees = report_reader.Trees.from_dict(export(model).to_dict())  # through JSON's shapes
    probe = rng.normal(size=(50, len(report_reader.FEATURES)))
    ours = [trees.score(row) for row in probe.tolist()]
    assert ours == pytest.approx(model.decision_function(probe).tolist(), abs=1e-9)


@pytest.mark.parametrize("tactics", ["diversified", "mixed", "classic"])
def test_the_shipped_reader_picks_the_reported_member_of_held_out_reports(tactics: str) -> None:
    """Seeds past the fit's held-out range: neither fitted nor reported on."""
    first = 0
    for i in range(10):
        ep, obs, starting = read_report("hard", HELD_OUT_BASE + 5_000 + i, tactics)
        profiles = {p.account_id: p for p in obs.visible_accounts}
        found = report_reader.posterior("hard", profiles, starting)
        assert found is not None and sum(found.values()) == pytest.approx(1.0)
        first += max(found, key=found.get) == ep.network.reported_id
    assert first >= 8


def test_no_reading_before_the_whole_report_nor_for_a_report_of_another_size() -> None:
    ep, obs, starting = read_report("medium", SEED_BASE, "classic")
    profiles = {p.account_id: p for p in obs.visible_accounts}
    assert len(starting) == get_task("medium").n_starting
    assert report_reader.posterior("medium", profiles, starting) is not None
    partial = {a: p for a, p in profiles.items() if a != starting[-1]}
    assert report_reader.posterior("medium", partial, starting) is None
    assert report_reader.posterior("medium", profiles, starting[:-1]) is None
    # hand-built cases (two starting accounts) score by the evidence alone
    a = ring_member("u_a", ["u_b"])
    c = profile("u_c", ["u_x"])
    alone = observation([a, c], visible=["u_a", "u_c", "u_b", "u_x"])
    read, _ = score_observation(alone, ["u_a", "u_c"])
    assert read == score_observation(alone, ["u_a", "u_c"], read_report=False)[0]


def test_the_fit_labels_one_member_per_report() -> None:
    tactics, rows, labels = report(("hard", SEED_BASE, "diversified"))
    assert tactics == "diversified" and sum(labels) == 1
    assert len(rows) == len(labels) == get_task("hard").n_starting
    assert all(len(r) == len(report_reader.FEATURES) for r in rows)


def test_a_member_nothing_else_betrays_is_flagged_once_the_report_is_read(tmp_path) -> None:
    """Hard `mixed` campaign 133, round 0 (tests/agent/test_rules.py: without the reader nothing
    reaches the flag threshold there): with it, the first flag is the reported member, at once,
    for the reader's reason (the next flags are the evidence's), and the round is won."""
    memory = Memory(tmp_path / "memory.sqlite")
    weights = experience.latest_version(memory, "hard").as_rule_weights()
    memory.close()
    yields = trace_yields.prior("hard", None)
    episode = Episode.for_round("hard", 133, 0, "mixed")
    flags: list[tuple[int, str, str]] = []

    def watch(_ep, obs, _start, p) -> None:
        kind, account, _ = parse_step(p.action)
        if kind == "flag":
            flags.append((obs.step_count, account, p.reason))

    played = play_episode(
        episode,
        watch,
        scorer=lambda _ep, obs, start: score_observation(obs, start, weights, yields),
        pivot_yields=yields,
    )
    n_starting = get_task("hard").n_starting
    assert flags[0][:2] == (n_starting, episode.network.reported_id)
    assert "by the report reader" in flags[0][2]
    assert all("report reader" not in why for _, _, why in flags[1:])
    assert played["won"]


def test_reading_with_swaps_one_task_s_reader_for_the_block() -> None:
    shipped = report_reader.load
    flat = {"init": 0.25, "rate": 0.1, "trees": []}
    with reading_with("hard", flat):
        assert report_reader.load("hard").score([0.0] * len(report_reader.FEATURES)) == 0.25
        assert report_reader.load("medium") is shipped("medium")
    assert report_reader.load is shipped


def test_the_shipped_reader_reads_the_rounds_an_adaptive_operator_reaches() -> None:
    """Campaigns past the fit's held-out campaigns, played by `prior` (whose takedowns steer the
    operator): one report per round, one member each, and the shipped hard reader finds it."""
    trees = report_reader.load("hard")
    assert trees is not None
    reports = []
    for c in range(HELD_OUT_CAMPAIGNS.stop + 100, HELD_OUT_CAMPAIGNS.stop + 103):
        played = adaptive_reports(("hard", c, "prior", trees.to_dict()))
        assert len(played) == ADAPTIVE_ROUNDS
        reports += played
    assert all(name == ADAPTIVE and sum(labels) == 1 for name, _, labels in reports)
    assert top1(trees, reports)[ADAPTIVE] >= 0.9  # 27 of the 30 rounds


def test_a_fit_of_some_tasks_keeps_the_others_and_records_its_command(tmp_path) -> None:
    out = tmp_path / "report_reader.json"
    kept = {"model": {"init": 0.0, "rate": 0.1, "trees": []}, "command": "an earlier fit"}
    out.write_text(json.dumps({"tasks": {"hard": kept}}))
    argv = ["--tasks", "easy", "--episodes", "1", "--held-out", "1", "--adaptive"]
    assert fit_report_reader.main([*argv, "--workers", "1", "--out", str(out)]) == 0
    tasks = json.loads(out.read_text())["tasks"]
    assert tasks["hard"] == kept
    assert tasks["easy"]["command"].startswith(
        "python bench/fits/fit_report_reader.py --tasks easy"
    )
    assert report_reader.Trees.from_dict(tasks["easy"]["model"]).trees
    assert set(tasks["easy"]["held_out_top1"]) == set(TACTICS_NAMES)
