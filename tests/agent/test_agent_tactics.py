"""The agent passes `tactics`, `campaign` and `round` through: env client, recovery, eval, CLI."""

from __future__ import annotations

import pytest

from fakegang.cli.main import build_parser
from fakegang.graph.recovery import rebuild_env_episode
from fakegang.runs.evaluation import evaluate
from fakegang.tools.env_client import EnvClient, reset_options
from fakegang.tools.rules.pivots import shipped_yields
from fakegang.tools.rules.player import play_rules
from fakegang_env.engine import Episode
from fakegang_env.tactics import campaign_round


def test_env_client_sends_the_reset_options(env_url: str) -> None:
    with EnvClient(env_url) as client:
        obs = client.reset("hard", 5, tactics="aged_accounts")
        engine = Episode("hard", 5, tactics="aged_accounts")
        assert obs.visible_account_ids == engine.observation()["visible_account_ids"]
        target = obs.visible_account_ids[0]
        seen = client.step(obs.episode_id, "inspect", target, 0)
        expected = engine.step("inspect", target)["visible_accounts"]
        assert [p.model_dump() for p in seen.visible_accounts] == expected

        spec = campaign_round("medium", 2, 6, "mixed")
        obs = client.reset("medium", None, tactics="mixed", campaign=2, round=6)
        assert obs.seed == spec.seed


def test_recovery_rebuilds_a_campaign_round_with_its_playbook(env_url: str) -> None:
    opts = {"tactics": "heavy_camouflage", "campaign": 1, "round": 0}
    with EnvClient(env_url) as client:
        first = client.reset("hard", None, episode_id="orig-camp", **opts)
        actions = []
        obs = first
        for idx in range(4):
            target = obs.visible_account_ids[idx]
            obs = client.step("orig-camp", "inspect", target, idx)
            actions.append((idx, f"inspect {target}"))
        rebuilt = rebuild_env_episode(
            client,
            task="hard",
            seed=first.seed,
            episode_id="rebuilt-camp",
            actions=actions,
            expect_action_count=4,
            expect_step_count=4,
            **opts,
        )
        assert rebuilt.visible_accounts == obs.visible_accounts
        assert rebuilt.seed == first.seed


def test_reset_options_takes_only_what_the_state_sets() -> None:
    assert reset_options({"task": "hard", "seed": 3}) == {}
    state = {"task": "hard", "seed": 3, "tactics": "mixed", "campaign": 0, "round": 2}
    assert reset_options(state) == {"tactics": "mixed", "campaign": 0, "round": 2}


def test_eval_with_the_fake_model_agrees_with_the_in_process_rule_player(env_url, tmp_path):
    seeds = [0, 1]
    summary = evaluate(
        task="easy",
        seeds=seeds,
        model="fake",
        db=str(tmp_path / "mem.sqlite"),
        env_url=env_url,
        tactics="crafted_content",
    )
    assert summary["tactics"] == "crafted_content" and summary["errors"] == 0
    for row, seed in zip(summary["results"], seeds, strict=True):
        # the graph pivots under the shipped yields (learning off pins them)
        local = play_rules(
            "easy", seed, tactics="crafted_content", pivot_yields=shipped_yields("easy")
        )
        assert row["final_message"] == local["message"]
        assert row["grader_score"] == local["grader_score"]


@pytest.mark.parametrize("command", ["train", "eval"])
def test_cli_accepts_tactics_and_refuses_unknown_names(command, capsys) -> None:
    parser = build_parser()
    base = [command, "--task", "easy"] + (["--seeds", "0-1"] if command == "eval" else [])
    assert parser.parse_args([*base, "--tactics", "loose_cells"]).tactics == "loose_cells"
    # train's default is the curriculum's (classic, the adaptive operator in the hard phase)
    assert parser.parse_args(base).tactics == ("classic" if command == "eval" else None)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args([*base, "--tactics", "sneaky"])
    assert exc.value.code == 2
    assert "aged_accounts" in capsys.readouterr().err


def test_the_rules_evidence_cache_never_mixes_two_playbooks_of_one_seed() -> None:
    """One seed under two playbooks has the same account ids: cached lockstep votes of the
    classic network must not be reused for the camouflaged one (they were, before the cache
    key held the follows)."""
    from fakegang.tools.rules import evidence

    evidence._PAIR_VOTES.clear()
    fresh = [play_rules("hard", s, tactics="heavy_camouflage")["message"] for s in range(5)]
    evidence._PAIR_VOTES.clear()
    after_classic = []
    for s in range(5):
        play_rules("hard", s)
        after_classic.append(play_rules("hard", s, tactics="heavy_camouflage")["message"])
    assert after_classic == fresh


def test_the_graph_plays_a_campaign_round_and_records_its_derived_seed(env_url, tmp_path) -> None:
    import uuid

    from fakegang.graph.context import Context
    from fakegang.graph.graph import compile_with_sqlite, recursion_limit
    from fakegang.tools.memory.store import Memory

    db = tmp_path / "agent.sqlite"
    app = compile_with_sqlite(db)
    ctx = Context(env_url=env_url, db_path=str(db), model="fake", learn=True)
    thread_id = str(uuid.uuid4())
    cfg = {"configurable": {"thread_id": thread_id}, "recursion_limit": recursion_limit(30)}
    inp = {"task": "easy", "campaign": 6, "round": 3, "tactics": "mixed", "run_id": "t"}
    app.invoke({**inp, "episode": 1}, cfg, context=ctx, durability="sync")
    state = app.get_state(cfg).values
    spec = campaign_round("easy", 6, 3, "mixed")
    assert state["done"] is True and state["seed"] == spec.seed
    assert Memory(db).episode(thread_id)["seed"] == spec.seed
    # a first learning episode pins the unknown operator's weights; the rule player scored with
    # the same weights and yields plays the same episode
    from fakegang.tools.learning import experience
    from fakegang.tools.rules.engine import score_observation

    assert state["weights_version"] == experience.UNKNOWN_OPERATOR_VERSION
    weights = experience.get_version(Memory(db), "easy", state["weights_version"]).as_rule_weights()
    yields = state["trace_yields"]
    local = play_rules(
        "easy",
        spec.seed,
        tactics=spec.playbook,
        pivot_yields=yields,
        scorer=lambda _ep, obs, start: score_observation(obs, start, weights, yields),
    )
    assert state["result"]["final_message"] == local["message"]
