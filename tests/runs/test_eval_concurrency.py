"""`fakegang eval --concurrency N` (worker processes): same results as sequential play, rows in a
JSONL file."""

from __future__ import annotations

import io
import json

import pytest

from fakegang.cli.main import main
from fakegang.runs.evaluation import EvalError, comparable, evaluate

SEEDS = list(range(12))


@pytest.fixture(scope="module")
def trained_db(tmp_path_factory, env_url):
    """A memory after 3 easy training episodes: α is above its floor, so the (stand-in) LLM is
    consulted and its prompts carry lessons and a few-shot example."""
    from fakegang.graph.context import Context
    from fakegang.runs.runner import TrainOptions, train

    root = tmp_path_factory.mktemp("eval_mem")
    db = str(root / "mem.sqlite")
    train(
        TrainOptions(
            context=Context(model="fake", db_path=db),
            env_url=env_url,
            task="easy",
            episodes=3,
            log_dir=str(root),
        ),
        out=io.StringIO(),
    )
    return db


def overlapping(rows: list[dict]) -> int:
    """Most episodes in flight at one moment, from their start offsets and wall times (both
    rounded to 1 ms, so an end is moved 2 ms earlier to absorb the rounding)."""
    edges = sorted(
        [(r["started_s"], 1) for r in rows]
        + [(r["started_s"] + r["wall_s"] - 0.002, -1) for r in rows],
        key=lambda e: (e[0], e[1]),
    )
    live = peak = 0
    for _, d in edges:
        live += d
        peak = max(peak, live)
    return peak


@pytest.mark.slow  # two forkserver workers on a 2-core machine: about 35 s
def test_episodes_in_two_worker_processes_equal_sequential(trained_db, env_url, tmp_path):
    seq_out, con_out = tmp_path / "seq.jsonl", tmp_path / "con.jsonl"
    kw = dict(task="easy", seeds=SEEDS, model="fake", db=trained_db, env_url=env_url)
    # a memory in which the LLM has earned trust, so that evaluation asks it (α from credit)
    from fakegang.tools.learning import credit_store
    from fakegang.tools.learning.credit import Credit
    from fakegang.tools.memory.store import Memory

    credit_store.record(
        Memory(trained_db), "easy", "trusted", Credit(60, 0, 0), llm_calls=60, actions=60,
        alpha=0.5,
    )  # fmt: skip
    seq = evaluate(**kw, out=seq_out)
    con = evaluate(**kw, out=con_out, concurrency=2)
    assert seq["episodes"] == con["episodes"] == len(SEEDS)
    assert seq["errors"] == con["errors"] == 0
    assert seq["llm_calls"] > 0  # the LLM path ran, not only the rules
    assert comparable(con["results"]) == comparable(seq["results"])
    summary_keys = ("win_rate", "mean_grader", "mean_steps", "llm_calls", "episodes")
    assert {k: con[k] for k in summary_keys} == {k: seq[k] for k in summary_keys}
    assert overlapping(seq["results"]) == 1
    assert overlapping(con["results"]) == 2
    for path, summary in ((seq_out, seq), (con_out, con)):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert [r["seed"] for r in rows] == SEEDS  # rewritten in seed order
        assert comparable(rows) == comparable(summary["results"])


def test_cli_json_summary_and_rows(trained_db, env_url, tmp_path, capsys):
    out = tmp_path / "rows" / "eval.jsonl"
    args = ["eval", "--task", "easy", "--seeds", "3-6", "--model", "fake", "--db", trained_db]
    code = main([*args, "--env-url", env_url, "--concurrency", "3", "--out", str(out), "--json"])
    assert code == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["episodes"] == 4 and summary["concurrency"] == 3
    assert summary["backend"] == "local (3 worker processes)"
    assert {"task", "model", "episodes", "win_rate", "mean_grader", "mean_steps", "llm_calls"} <= (
        set(summary)
    )
    assert "eval easy [" in captured.err and "4/4" in captured.err  # the progress bar
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in rows] == [3, 4, 5, 6]
    assert summary["win_rate"] == round(sum(r["won"] for r in rows) / 4, 4)


def test_a_failing_episode_is_a_row_not_a_lost_run(trained_db, env_url, tmp_path):
    out = tmp_path / "rows.jsonl"
    res = evaluate(
        task="easy",
        seeds=[0, -1, 1],  # the server refuses a negative seed
        model="fake",
        db=trained_db,
        env_url=env_url,
        concurrency=2,
        out=out,
    )
    assert res["errors"] == 1 and res["episodes"] == 2
    bad = [r for r in res["results"] if "error" in r]
    assert bad[0]["seed"] == -1 and "422" in bad[0]["error"]
    assert len(out.read_text().splitlines()) == 3


def test_bad_settings_are_refused_before_playing(trained_db, env_url, tmp_path, capsys):
    kw = dict(task="easy", seeds=[0], model="fake", db=trained_db, env_url=env_url)
    with pytest.raises(EvalError, match="at least 1"):
        evaluate(**kw, concurrency=0)
    with pytest.raises(EvalError, match="no seeds"):
        evaluate(**{**kw, "seeds": []})
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(EvalError, match="cannot write --out"):
        evaluate(**kw, out=blocker / "rows.jsonl")
    with pytest.raises(EvalError, match="no environment server answers"):
        evaluate(**{**kw, "env_url": "http://127.0.0.1:9"})
    base = ["eval", "--task", "easy", "--seeds", "0", "--model", "fake", "--db", trained_db]
    with pytest.raises(SystemExit) as exc:
        main([*base, "--concurrency", "0"])
    assert exc.value.code == 2
    assert "must be > 0" in capsys.readouterr().err
    assert main([*base, "--env-url", env_url, "--out", str(blocker / "x.jsonl")]) == 2
    assert "cannot write --out" in capsys.readouterr().err
