"""Each node of the episode graph on its own (real env server, real SQLite memory)."""

from __future__ import annotations

import uuid

import pytest
from langgraph.runtime import Runtime

from fakegang.graph import nodes, reflection, resources
from fakegang.graph.context import Context
from fakegang.runs.replay import describe as replay_describe
from fakegang.tools.memory.store import Memory


@pytest.fixture()
def ctx(env_url, tmp_path) -> Context:
    return Context(env_url=env_url, db_path=str(tmp_path / "n.sqlite"), model="fake", learn=True)


def call(node, state, ctx: Context, thread_id: str) -> dict:
    return node(state, Runtime(context=ctx), {"configurable": {"thread_id": thread_id}})


def started(ctx: Context, task: str = "easy", seed: int = 2) -> tuple[str, dict]:
    thread_id = str(uuid.uuid4())
    state: dict = {"task": task, "seed": seed, "run_id": "r", "episode": 1}
    state |= call(nodes.observe, state, ctx, thread_id)
    return thread_id, state


def test_observe_starts_the_episode_and_summarises_evidence(ctx) -> None:
    thread_id, state = started(ctx)
    assert state["env_episode_id"] == thread_id  # episode id = thread id: a re-run resets it
    assert state["action_count"] == 0 and state["steps_remaining"] == 30
    assert state["alpha"] == pytest.approx(0.20)
    assert len(state["starting_ids"]) == 5
    assert state["view"]["visible"] == 5 and state["view"]["inspected"] == 0
    assert Memory(ctx.db_path).episode(thread_id)["status"] == "running"
    # observing again (a re-run) changes nothing
    again = call(nodes.observe, state, ctx, thread_id)
    assert again["view"] == state["view"]


def test_rule_check_proposes_a_legal_action_with_confidence(ctx) -> None:
    thread_id, state = started(ctx)
    out = call(nodes.rule_check, state, ctx, thread_id)
    rule = out["rule"]
    assert rule["action"].startswith("inspect ")
    assert rule["action"].split()[1] in state["starting_ids"]
    assert 0.0 <= rule["confidence"] <= 1.0 and rule["reason"]
    assert rule["action"] in out["choices"] and "submit" in out["choices"]


def test_llm_decide_is_skipped_when_the_rule_is_sure(ctx) -> None:
    thread_id, state = started(ctx)
    # a model spec that cannot even be built proves no model is touched
    broken = Context(env_url=ctx.env_url, db_path=ctx.db_path, model="nosuchprovider:x")
    state["rule"] = {"action": "submit", "confidence": 0.9, "reason": "r"}
    state["choices"] = ["submit"]
    state["explore_rate"] = 0.0  # no exploration budget: only the α gate decides
    out = call(nodes.llm_decide, state, broken, thread_id)
    assert out["llm"]["status"] == "skipped"


def test_llm_decide_asks_the_stand_in_when_the_rule_is_unsure(ctx) -> None:
    thread_id, state = started(ctx)
    state |= call(nodes.rule_check, state, ctx, thread_id)
    state["alpha"] = 0.99
    state["llm_gain"] = 1.0  # the LLM's credit says it beats the rule
    out = call(nodes.llm_decide, state, ctx, thread_id)
    assert out["llm"]["status"] == "ok"
    assert out["llm"]["action"] in state["choices"]


def test_llm_decide_reports_an_unbuildable_model_as_an_error(ctx) -> None:
    thread_id, state = started(ctx)
    state |= call(nodes.rule_check, state, ctx, thread_id)
    state["alpha"] = 0.99
    state["llm_gain"] = 1.0  # the LLM's credit says it beats the rule
    broken = Context(env_url=ctx.env_url, db_path=ctx.db_path, model="nosuchprovider:x")
    out = call(nodes.llm_decide, state, broken, thread_id)
    assert out["llm"]["status"] == "error" and "model unavailable" in out["llm"]["error"]


def base_state(**over) -> dict:
    state = {
        "rule": {"action": "inspect u_a", "confidence": 0.3, "reason": "r"},
        "choices": ["inspect u_a", "inspect u_b", "submit"],
        "llm": {"status": "ok", "action": "inspect u_b", "tokens": 12},
        "alpha": 0.5,
        "action_count": 4,
        "max_actions": 90,
        "tally": {
            "agree": 0,
            "rule_override": 0,
            "llm": 0,
            "llm_calls": 0,
            "llm_tokens": 0,
            "llm_errors": 0,
        },
    }
    state.update(over)
    return state


def test_arbitrate_modes_and_the_pending_index() -> None:
    out = nodes.arbitrate(base_state())
    assert out["decision"] == {"index": 4, "action": "inspect u_b", "mode": "llm"}
    assert out["tally"]["llm"] == 1 and out["tally"]["llm_calls"] == 1
    assert out["tally"]["llm_tokens"] == 12

    sure = base_state(rule={"action": "inspect u_a", "confidence": 0.8, "reason": "r"})
    assert nodes.arbitrate(sure)["decision"]["mode"] == "rule_override"

    same = base_state(llm={"status": "ok", "action": "inspect u_a", "tokens": 3})
    assert nodes.arbitrate(same)["decision"]["mode"] == "agree"

    # an exploration answer (stored as `shadow`) is judged after the debrief, never acted on
    exploring = base_state(
        llm={"status": "ok", "shadow": True, "action": "inspect u_b", "tokens": 5}
    )
    out = nodes.arbitrate(exploring)
    assert out["decision"] == {"index": 4, "action": "inspect u_a", "mode": "rule_override"}
    assert out["tally"]["llm_calls"] == 1
    assert "llm_deciding_calls" not in out["tally"]  # exploration does not spend the stake
    # a deciding answer that agrees with the rule moves nothing but still spends the stake
    assert nodes.arbitrate(same)["tally"]["llm_deciding_calls"] == 1


def test_llm_decide_stops_trusting_the_llm_once_its_stake_is_spent(ctx) -> None:
    thread_id, state = started(ctx)
    state |= call(nodes.rule_check, state, ctx, thread_id)
    state |= {"alpha": 0.99, "llm_gain": 1.0, "explore_rate": 0.0, "llm_stake": 3}
    state["tally"] = {**state["tally"], "llm": 0, "llm_deciding_calls": 2}
    assert call(nodes.llm_decide, state, ctx, thread_id)["llm"]["status"] == "ok"
    # three deciding calls made already, none of them an overrule: the stake is spent all the same
    state["tally"] = {**state["tally"], "llm_deciding_calls": 3}
    out = call(nodes.llm_decide, state, ctx, thread_id)
    assert out["llm"]["status"] == "skipped" and "stake" in out["llm"]["reason"]


def test_llm_decide_explores_the_report_and_stops_once_the_model_said_submit(ctx) -> None:
    thread_id, state = started(ctx)
    state |= call(nodes.rule_check, state, ctx, thread_id)
    # an untrusted model (α at the floor, negative gain): asked only to explore
    state |= {"alpha": 0.2, "llm_gain": -1.0, "explore_rate": 0.25, "llm_stake": 4}
    assert state["explore_report_weight"] == 4.0  # a fresh memory: the model is not behind
    assert state["view"]["flagged"] == 0  # reading the report: every step explored (4 × 0.25)
    for episode in range(12):  # (the exploration draw is keyed by task, seed and episode)
        out = call(nodes.llm_decide, {**state, "episode": episode}, ctx, thread_id)
        assert out["llm"]["status"] == "ok" and out["llm"]["shadow"] is True
    # the model proposed to submit earlier in the episode: later answers would repeat it
    state["tally"] = {**state["tally"], "llm_submits": 1}
    out = call(nodes.llm_decide, state, ctx, thread_id)
    assert out["llm"]["status"] == "skipped" and "submit" in out["llm"]["reason"]


def test_arbitrate_counts_the_llms_submit_proposals() -> None:
    said = base_state(llm={"status": "ok", "shadow": True, "action": "submit", "tokens": 2})
    assert nodes.arbitrate(said)["tally"]["llm_submits"] == 1
    assert "llm_submits" not in nodes.arbitrate(base_state())["tally"]


def test_arbitrate_never_acts_outside_the_legal_menu_or_on_errors() -> None:
    rogue = base_state(llm={"status": "ok", "action": "flag u_zzz", "tokens": 1})
    out = nodes.arbitrate(rogue)
    assert out["decision"]["action"] == "inspect u_a"
    assert out["decision"]["mode"] == "rule_override"

    failed = base_state(llm={"status": "error", "error": "timeout after 1.0s"})
    out = nodes.arbitrate(failed)
    assert out["decision"]["action"] == "inspect u_a"
    assert out["tally"]["llm_errors"] == 1


def test_arbitrate_remembers_every_account_unflagged_in_the_episode() -> None:
    rule_unflag = base_state(
        rule={"action": "unflag u_a", "confidence": 0.9, "reason": "r"},
        choices=["unflag u_a", "submit"],
        llm={"status": "skipped"},
        unflagged_ids=["u_z"],
    )
    assert nodes.arbitrate(rule_unflag)["unflagged_ids"] == ["u_z", "u_a"]
    # the LLM's unflag counts too, and an account is listed once
    llm_unflag = base_state(
        choices=["inspect u_a", "unflag u_z", "submit"],
        llm={"status": "ok", "action": "unflag u_z", "tokens": 1},
        unflagged_ids=["u_z"],
    )
    out = nodes.arbitrate(llm_unflag)
    assert out["decision"]["action"] == "unflag u_z" and "unflagged_ids" not in out
    assert "unflagged_ids" not in nodes.arbitrate(base_state())


def test_arbitrate_records_a_hypothesis_played_not_one_overruled() -> None:
    rule = {"action": "flag u_a", "confidence": 0.4, "reason": "hypothesis", "hypothesis": True}
    played = base_state(
        rule=rule, choices=["flag u_a", "inspect u_b", "submit"], llm={"status": "skipped"},
        alpha=0.2, step_count=24, hypotheses=[["u_z", 16]],
    )  # fmt: skip
    assert nodes.arbitrate(played)["hypotheses"] == [["u_z", 16], ["u_a", 24]]
    overruled = {**played, "llm": {"status": "ok", "action": "inspect u_b", "tokens": 3}}
    overruled["alpha"] = 0.9
    out = nodes.arbitrate(overruled)
    assert out["decision"]["action"] == "inspect u_b" and "hypotheses" not in out


def test_arbitrate_submits_past_the_action_cap() -> None:
    out = nodes.arbitrate(base_state(action_count=90))
    assert out["decision"]["action"] == "submit"


def test_the_rule_alone_is_named_apart_and_counted_as_the_rules() -> None:
    """Not asked, the LLM cannot be overridden: `rule_alone`, counted in the rule's column as
    before (`rule_override` in the tally), so every stored figure stays what it was."""
    alone = nodes.arbitrate(base_state(llm={"status": "skipped", "reason": "sure"}))
    assert alone["decision"] == {"index": 4, "action": "inspect u_a", "mode": "rule_alone"}
    assert alone["tally"] == {"rule_override": 1}
    failed = nodes.arbitrate(base_state(llm={"status": "error", "error": "x"}))
    assert failed["decision"]["mode"] == "rule_override"  # asked: its answer was unusable
    capped = nodes.arbitrate(base_state(action_count=90, llm={"status": "skipped"}))
    assert capped["decision"]["mode"] == "rule_alone"


def test_old_rule_override_records_read_as_rule_alone_when_the_llm_was_not_asked() -> None:
    """A database written before `rule_alone` stored `rule_override` for both cases; the
    checkpoints (arbitrate's spec), the steps table and replay all map it when reading."""
    old = {"decision": {"index": 0, "action": "inspect u_a", "mode": "rule_override"}, "alpha": 0.2}
    skipped = {**old, "llm": {"status": "skipped", "reason": "sure"}}
    asked = {**old, "llm": {"status": "ok", "action": "inspect u_b"}}
    spec = nodes.spec_of("arbitrate")
    assert spec.outputs(skipped)["decision"]["mode"] == "rule_alone"
    assert spec.outputs(asked)["decision"]["mode"] == "rule_override"
    assert replay_describe("arbitrate", skipped).startswith("rule_alone → inspect u_a")
    row = {"idx": 0, "action": "inspect u_a", "mode": "rule_override", "alpha": 0.2,
           "rule_action": "inspect u_a", "rule_confidence": 0.9, "rule_reason": "r",
           "llm_status": "skipped", "llm_action": None, "llm_reason": "sure", "llm_error": None,
           "llm_latency_s": None, "llm_tokens": None, "reward": -0.01, "message": "m",
           "steps_remaining": 29, "view": None}  # fmt: skip
    rebuilt = nodes.from_step_row(row)
    assert list(rebuilt) == ["rule_check", "llm_decide", "arbitrate", "step_env"]  # no view kept
    assert rebuilt["arbitrate"]["decision"]["mode"] == "rule_alone"


def test_the_step_row_is_assembled_from_the_specs_and_reads_back() -> None:
    state = base_state(
        decision={"index": 4, "action": "inspect u_a", "mode": "rule_alone"},
        view={"visible": 5, "flagged": 0},
        last={"action": "inspect u_a", "message": "m", "reward": -0.01, "error": None},
        steps_remaining=20,
    )
    row = nodes.step_row(state, "t")
    assert row["thread_id"] == "t" and row["idx"] == 4 and row["mode"] == "rule_alone"
    assert row["view"] == '{"visible":5,"flagged":0}' and row["llm_tokens"] == 12
    assert set(row) == {"thread_id", "idx"} | {
        field for spec in nodes.SPECS for field in spec.step_fields
    }
    back = nodes.from_step_row(row)
    assert back["observe"] == {"view": state["view"]}
    assert back["arbitrate"]["decision"] == state["decision"]
    assert back["step_env"]["last"]["message"] == "m"


def test_step_env_is_idempotent_when_re_run(ctx) -> None:
    thread_id, state = started(ctx)
    state |= call(nodes.rule_check, state, ctx, thread_id)
    state["llm"] = {"status": "skipped"}
    state |= nodes.arbitrate(state)
    first = call(nodes.step_env, state, ctx, thread_id)
    # the node re-runs from its first line after a crash: same pending index, same answer
    second = call(nodes.step_env, state, ctx, thread_id)
    assert first == second
    assert first["action_count"] == 1 and first["steps_remaining"] == 29
    server_state = resources.env_client(ctx).state(state["env_episode_id"])
    assert server_state["action_count"] == 1
    assert len(Memory(ctx.db_path).steps(thread_id)) == 1


def test_route_after_step() -> None:
    assert nodes.route_after_step({"done": False}) == "observe"
    assert nodes.route_after_step({"done": True}) == "reflect"


def test_reflect_records_learns_and_is_idempotent(ctx) -> None:
    thread_id, state = started(ctx)
    state["decision"] = {"index": 0, "action": "submit", "mode": "rule_alone"}
    state["rule"] = {"action": "submit", "confidence": 0.9, "reason": "r"}
    state["llm"] = {"status": "skipped"}
    state |= call(nodes.step_env, state, ctx, thread_id)
    assert state["done"]
    first = call(reflection.reflect, state, ctx, thread_id)["result"]
    second = call(reflection.reflect, state, ctx, thread_id)["result"]
    mem = Memory(ctx.db_path)
    assert first["final_message"].startswith("[LOSS]")  # nothing flagged
    assert second["won"] == first["won"] and second["reward"] == first["reward"]
    assert mem.episode(thread_id)["status"] == "finished"
    assert mem.reflection_count("easy") == 1  # a loss always gets a lesson, once
    assert mem.reflection_for(thread_id).text.startswith("[stand-in]")
    assert mem.alpha("easy") == pytest.approx(0.20)  # credit rule: nothing judged, α at its floor
    n_rows = mem.db.execute("select count(*) from episodes").fetchone()[0]
    assert n_rows == 1


def test_a_trusted_llm_cannot_cycle_flags_on_one_account() -> None:
    """Flag, unflag: a mistake and its fix; a third free flip of the same account is the start
    of a cycle (a deterministic model meets the same case text again), so the rule plays."""
    state = base_state(
        choices=["inspect u_a", "flag u_z", "submit"],
        llm={"status": "ok", "action": "flag u_z", "tokens": 1},
    )
    out = nodes.arbitrate(state)
    assert out["decision"]["action"] == "flag u_z" and out["llm_flips"] == {"u_z": 1}
    state = base_state(
        choices=["inspect u_a", "unflag u_z", "submit"],
        llm={"status": "ok", "action": "unflag u_z", "tokens": 1},
        llm_flips=out["llm_flips"],
    )
    out = nodes.arbitrate(state)
    assert out["decision"]["action"] == "unflag u_z" and out["llm_flips"] == {"u_z": 2}
    state = base_state(
        choices=["inspect u_a", "flag u_z", "submit"],
        llm={"status": "ok", "action": "flag u_z", "tokens": 1},
        llm_flips=out["llm_flips"],
    )
    out = nodes.arbitrate(state)
    assert out["decision"] == {"index": 4, "action": "inspect u_a", "mode": "rule_override"}
    assert "llm_flips" not in out
