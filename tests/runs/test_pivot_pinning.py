"""The trace yields an episode pinned at its start decide its pivots whatever is learned later:
a fork played before and after the yields table moved makes the same actions, and the reference
run that the kill/resume, pause, replay and fork tests compare against does pivot."""

from __future__ import annotations

import io

from runs_helpers import copy_db, state, steps_of

from fakegang.graph import resources
from fakegang.graph.graph import compile_with_sqlite
from fakegang.runs.fork import find_fork_point, fork_episode
from fakegang.runs.replay import head_branch
from fakegang.runs.runner import episode_thread_id
from fakegang.tools.learning import trace_yields
from fakegang.tools.memory.store import Memory
from fakegang_env.traces import TRACES


def test_the_reference_run_pivots(uninterrupted_run) -> None:
    db, _, run_id = uninterrupted_run
    actions = [s["action"] for i in (1, 2) for s in steps_of(db, episode_thread_id(run_id, i))]
    assert any(a.startswith("pivot ") for a in actions)
    # and the second episode pinned what the first one's debrief taught
    pinned = state(db, episode_thread_id(run_id, 2)).values["trace_yields"]
    memory = Memory(db)
    first = episode_thread_id(run_id, 1)
    learned = {
        r["trace"]: r["estimate"] for r in trace_yields.history(memory) if r["thread_id"] == first
    }
    memory.close()
    assert pinned == learned


def _fork_actions(db, tid: str, k: int, action: str, env_url: str) -> tuple[list[str], dict]:
    result = fork_episode(str(db), tid, at=k, action=action, env_url=env_url, out=io.StringIO())
    resources.reset_all()
    fork_tid = result["thread_id"]
    return [s["action"] for s in steps_of(db, fork_tid)], state(db, fork_tid).values


def test_a_fork_keeps_the_pinned_yields_after_later_learning(
    uninterrupted_run, env_url, tmp_path
) -> None:
    db = copy_db(uninterrupted_run[0], tmp_path)
    tid, k = episode_thread_id(uninterrupted_run[2], 2), 1
    pinned = state(db, tid).values["trace_yields"]
    app = compile_with_sqlite(db)
    chain, _ = head_branch(app, tid)
    app.checkpointer.conn.close()
    fp = find_fork_point(chain, k)
    original = fp.values["decision"]["action"]
    action = next(
        f"inspect {a}" for a, _ in fp.values["view"]["top_frontier"] if f"inspect {a}" != original
    )
    before, before_state = _fork_actions(db, tid, k, action, env_url)
    # later debriefs say every trace returns crowds: the table's yields collapse
    memory = Memory(db)
    crowd = {t: trace_yields.TraceRecord(t, 3, 0.0, 0, 60) for t in TRACES}
    for i in range(4):
        trace_yields.record(memory, "easy", f"later-{i}", crowd)
    now = trace_yields.estimate(memory, "easy")
    memory.close()
    assert all(now[t] < pinned[t] for t in TRACES)
    after, after_state = _fork_actions(db, tid, k, action, env_url)
    assert after == before and any(a.startswith("pivot ") for a in after[k:])
    assert before_state["trace_yields"] == after_state["trace_yields"] == pinned
