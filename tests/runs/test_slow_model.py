"""A local model that does not stall the run: when an in-process model times out (a busy CPU, a
slow machine), the call is not retried, the model is not asked again in that episode and the
reflection falls back at once. A deliberately slow stand-in plays the busy CPU (how long a run
takes is measured by bench/speed/busy_cpu.py, not here)."""

from __future__ import annotations

import io
import sqlite3
from dataclasses import replace

from agent_models import SlowModel
from runs_helpers import options

from fakegang.graph import resources
from fakegang.graph.reflection import FALLBACK_PREFIX
from fakegang.runs.runner import context_for, train


def test_a_timed_out_model_is_asked_once_per_episode_and_never_for_its_lesson(
    env_url, tmp_path
) -> None:
    opts = options(tmp_path, env_url)
    opts.task, opts.episodes = "medium", 4
    opts.context = replace(opts.context, llm_timeout_s=1.0, llm_retries=2)
    model = SlowModel(delay_s=4.0)
    resources.install_model(context_for(opts, ""), model)  # what `train` builds, replaced
    out = io.StringIO()
    run_id = train(opts, out=out)["run_id"]

    conn = sqlite3.connect(opts.db)
    conn.row_factory = sqlite3.Row
    episodes = [dict(r) for r in conn.execute("select * from episodes where run_id = ?", [run_id])]
    steps = [
        dict(r)
        for r in conn.execute(
            "select s.* from steps s join episodes e on e.thread_id = s.thread_id "
            "where e.run_id = ? and s.llm_status = 'error'",
            [run_id],
        )
    ]
    lessons = {r["thread_id"]: r["text"] for r in conn.execute("select * from reflections")}
    conn.close()
    timed_out = {s["thread_id"] for s in steps}
    assert timed_out, "the stand-in was never asked: the test proves nothing"
    # one call per episode at most: no retry (attempts would show as "x2"), not asked again; an
    # episode whose decisions never asked the model (its exploration share falls as calls fail)
    # still asks it for the lesson
    assert len(steps) == len(timed_out)
    asked_for_lesson = [e for e in episodes if e["reflection_call"] in ("ok", "error")]
    assert not {e["thread_id"] for e in asked_for_lesson} & timed_out
    assert all(s["llm_error"] == "timeout after 1.0s" for s in steps)
    assert all(s["llm_error_class"] == "timeout" for s in steps)
    for e in episodes:
        if e["thread_id"] in timed_out and e["thread_id"] in lessons:
            # its lesson was built from the facts without asking the model
            assert e["reflection_call"] == "skipped"
            assert lessons[e["thread_id"]].startswith(FALLBACK_PREFIX)
    text = out.getvalue()
    n = model.calls  # every call timed out, the lessons' too
    assert model.calls == len(steps) + len(asked_for_lesson)
    assert f"LLM: {n} of {n} LLM calls failed (timeout)" in text
    assert "after a timeout the model was not asked again in " in text
