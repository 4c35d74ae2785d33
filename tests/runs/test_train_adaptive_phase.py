"""The curriculum's hard phase meets the adaptive operator: its episodes are the rounds of one
campaign, each round's token taken from the previous round's final checkpoint, and the run ends
with what was learned in words (a shortened curriculum, through the real graph and server)."""

from __future__ import annotations

import io

from fakegang.graph.graph import compile_with_sqlite
from fakegang.runs import runner
from fakegang.runs.runner import TrainOptions, episode_tactics, train
from fakegang.tools.memory.store import Memory


def test_the_hard_phase_plays_adaptive_rounds_and_the_run_says_what_it_learned(
    tmp_path, monkeypatch
):
    short = (
        (0, "easy", "classic", "=== Phase 1 ==="),
        (1, "hard", "adaptive", "=== Phase 3 ==="),
    )
    monkeypatch.setattr(runner, "CURRICULUM", short)
    monkeypatch.setattr(runner, "PHASES", {s: b for s, _t, _a, b in short})
    db = tmp_path / "m.sqlite"
    opts = TrainOptions(episodes=4, seed_offset=7, log_dir=str(tmp_path / "runs")).with_db(db)
    opts.context.model = "fake"
    out = io.StringIO()
    run_id = train(opts, out=out)["run_id"]
    text = out.getvalue()
    assert episode_tactics(opts, "easy") == "classic"
    assert episode_tactics(opts, "hard") == "adaptive"
    assert episode_tactics(TrainOptions(task="hard"), "hard") == "classic"  # one task: classic

    memory = Memory(db)
    rows = memory.run_episodes(run_id)
    memory.close()
    app = compile_with_sqlite(str(db))
    states = [app.get_state({"configurable": {"thread_id": r["thread_id"]}}).values for r in rows]
    app.checkpointer.conn.close()
    assert "operator" not in states[0]  # the easy episode is classic
    hard = states[1:]
    assert [s["operator"]["round"] for s in hard] == [0, 1, 2]
    assert all(s["campaign"] == 7 and s["tactics"] == "adaptive" for s in hard)
    # each round sends the token the round before returned
    for before, after in zip(hard, hard[1:], strict=False):
        assert after["operator_token"] == before["operator"]["next_token"]
    assert "What the agent learned" in text
    wins = sum(bool(r["won"]) for r in rows[1:])
    assert f"against the adaptive operator: {wins}/3 wins" in text
