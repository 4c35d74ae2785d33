"""The real graph with the SQLite checkpointer against the real environment server."""

from __future__ import annotations

import sqlite3
import uuid

import pytest
from agent_models import GarbageModel, RaisingModel, SlowModel

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.graph import NODES_PER_ACTION, compile_with_sqlite, recursion_limit
from fakegang.graph.reflection import FALLBACK_PREFIX
from fakegang.graph.state import EpisodeOutput
from fakegang.tools.memory.store import Memory


def play(app, ctx: Context, task: str = "easy", seed: int = 0) -> tuple[str, dict]:
    thread_id = str(uuid.uuid4())
    cfg = {"configurable": {"thread_id": thread_id}, "recursion_limit": recursion_limit(30)}
    out = app.invoke(
        {"task": task, "seed": seed, "run_id": "t", "episode": 1},
        cfg,
        context=ctx,
        durability="sync",
    )
    state = app.get_state(cfg).values
    # invoke returns the output schema: the outcome without digging in the full state
    assert set(out) == set(EpisodeOutput.__annotations__)
    assert out == {k: state[k] for k in EpisodeOutput.__annotations__}
    return thread_id, state


def test_one_episode_end_to_end(env_url, tmp_path) -> None:
    db = tmp_path / "agent.sqlite"
    app = compile_with_sqlite(db)
    ctx = Context(env_url=env_url, db_path=str(db), model="fake", learn=True)
    thread_id, state = play(app, ctx)

    result = state["result"]
    assert state["done"] is True
    assert result["final_message"].startswith(("[WIN]", "[LOSS]"))
    assert 0.0 <= result["grader_score"] <= 1.0
    # α at its floor on a fresh memory: the rules decide every step; the LLM is asked only on
    # the exploration share of steps (its answers are judged after the debrief, never acted on)
    assert state["alpha"] == pytest.approx(0.20)
    # the reducer added one decision per action, all of them the rule's (fake never earns credit)
    assert state["tally"]["rule_override"] + state["tally"]["agree"] == state["action_count"]
    assert state["tally"]["llm"] == 0
    # exploration calls only: a bounded share of the actions
    assert state["tally"]["llm_calls"] <= 0.2 * state["action_count"]

    mem = Memory(db)
    row = mem.episode(thread_id)
    assert row["status"] == "finished"
    steps = mem.steps(thread_id)
    assert [s["idx"] for s in steps] == list(range(state["action_count"]))
    assert mem.alpha("easy") is not None
    conn = sqlite3.connect(db)
    n_checkpoints, biggest = conn.execute(
        "select count(*), max(length(checkpoint)) from checkpoints where thread_id = ?",
        [thread_id],
    ).fetchone()
    assert n_checkpoints >= NODES_PER_ACTION * state["action_count"]
    assert biggest < 8_000  # the state stays lean: observations live in the memory tables


def test_checkpointed_state_reads_back(env_url, tmp_path) -> None:
    db = tmp_path / "agent.sqlite"
    ctx = Context(env_url=env_url, db_path=str(db), model="fake", learn=True)
    thread_id, state = play(compile_with_sqlite(db), ctx, seed=3)
    # a new process would compile again and read the same thread
    again = compile_with_sqlite(db).get_state({"configurable": {"thread_id": thread_id}})
    assert again.values["result"] == state["result"]
    assert again.next == ()


@pytest.mark.parametrize(
    ("model", "expected_error", "lesson_start"),
    [
        # prose is no action, but it is a (bad) lesson: stored as the LLM's
        (GarbageModel(), "unparseable", "I think the fox jumped over the moon."),
        (RaisingModel(), "exploded", FALLBACK_PREFIX + ", LLM failed"),
        (SlowModel(delay_s=3.0), "timeout", FALLBACK_PREFIX + ", LLM failed"),
    ],
    ids=["garbage", "raises", "times-out"],
)
def test_broken_llm_never_ends_the_episode(
    env_url, tmp_path, model, expected_error, lesson_start
) -> None:
    db = tmp_path / "agent.sqlite"
    mem = Memory(db)
    mem.save_alpha("easy", 0.95, 0.5, 4)  # above the rule's 0.9 on inspections: the LLM is asked
    ctx = Context(
        env_url=env_url, db_path=str(db), model="fake", llm_timeout_s=1.0, llm_retries=0,
        alpha_rule="seed", learn=True,
    )  # fmt: skip
    resources.install_model(ctx, model)
    thread_id, state = play(compile_with_sqlite(db), ctx, seed=1)

    assert state["done"] and state["result"]["final_message"]
    assert model.calls > 0
    assert state["tally"]["llm_errors"] == state["tally"]["llm_calls"] > 0
    assert state["tally"]["llm"] == 0  # no LLM decision was acted on
    errors = [s["llm_error"] for s in mem.steps(thread_id) if s["llm_status"] == "error"]
    assert errors and all(expected_error in e.lower() for e in errors), errors[:3]
    # the rule action stood at every step the LLM failed
    for s in mem.steps(thread_id):
        assert s["action"] == s["rule_action"]
    # the first episode on a fresh memory always leaves a lesson, even with a broken model
    refl = mem.reflection_for(thread_id)
    assert refl is not None and refl.text.startswith(lesson_start), refl
