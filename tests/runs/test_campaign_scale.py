"""`fakegang campaign` on the backends: worker processes and a local Ray instance give the JSON
of sequential play and record the same rounds in `--db` (merged, no duplicates, a killed worker's
campaign played again once), each campaign keeps its own learned tables, and bad settings are
refused before anything is played."""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest
from scale_helpers import rows, thread_record

from fakegang.cli.main import main
from fakegang.runs.campaign_sweep import (
    CampaignError,
    campaign_db_path,
    keep_campaign_db,
    run_campaigns,
)
from fakegang.runs.campaign_worker import CampaignJob, play_campaign_job
from fakegang.runs.worker import KILL_ENV_VAR

SETTING = dict(task="medium", tactics="mixed", campaigns=[0, 1], rounds=2, model="fake")
MODES = ("static", "prior", "learning")  # the modes that play through the graph, record rounds


def rounds_recorded(db) -> dict:
    """Per (mode, campaign, round number): the episodes row, its steps and its checkpoint and
    write counts, keyed by what the campaign is rather than by the invocation's ids."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for run in rows(conn, "select * from runs"):
            s = json.loads(run["settings"])
            for ep in rows(conn, "select * from episodes where run_id = ?", [run["run_id"]]):
                key = (s["mode"], s["campaign"], ep["episode"])
                assert key not in out  # one invocation per test database
                out[key] = thread_record(conn, ep)
        return out
    finally:
        conn.close()


def row_counts(db) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {
            t: conn.execute(f"select count(*) from {t}").fetchone()[0]
            for t in ("runs", "episodes", "steps", "checkpoints", "writes")
        }
    finally:
        conn.close()


def learned(db) -> dict:
    """A campaign database's learned tables, without timestamps."""
    conn = sqlite3.connect(db)
    try:
        versions = rows(conn, "select task, profile, frontier, n_rows from weight_versions")
        credit = rows(conn, "select task, better, worse, ties, llm_calls, alpha from credit")
        insight = rows(conn, "select task, key, importance, status from insights order by key")
        return {"versions": versions, "credit": credit, "insights": insight}
    finally:
        conn.close()


def _play(db, **kw) -> dict:
    return run_campaigns(**SETTING, compare=True, db=str(db), progress=False, **kw)


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    db = tmp_path_factory.mktemp("camp_seq") / "seq.sqlite"
    return _play(db), db


def _same_as_sequential(sequential, summary: dict, db) -> None:
    seq_summary, seq_db = sequential
    assert summary == seq_summary  # curves, grader, auc, since_switch, llm_call_share
    recorded = rounds_recorded(db)
    assert recorded == rounds_recorded(seq_db)  # per-round wins, actions, steps, checkpoints
    assert len(recorded) == len(MODES) * 2 * 2  # 2 campaigns x 2 rounds per agent mode
    assert row_counts(db) == row_counts(seq_db)  # nothing recorded twice, nothing extra
    for c in (0, 1):  # each campaign kept its own learned tables
        mine = learned(campaign_db_path(db, "learning", c))
        assert mine == learned(campaign_db_path(seq_db, "learning", c)) and mine["versions"]


def test_sequential_db_lists_every_round_for_runs_replay_and_report(sequential, tmp_path):
    summary, db = sequential
    assert set(summary["curves"]) == {"static", "prior", "learning", "oracle"}
    from fakegang.runs.runs import collect_runs, format_runs

    runs = [r for r in collect_runs(db) if r.settings.get("kind") == "campaign"]
    assert sorted((r.settings["mode"], r.settings["campaign"]) for r in runs) == sorted(
        (m, c) for m in MODES for c in (0, 1)
    )
    assert all(r.status == "finished" and r.finished == 2 for r in runs)
    assert "mode=learning" in format_runs(runs)
    learning = next(r for r in runs if r.settings["mode"] == "learning")
    import io

    from fakegang.runs.replay import replay

    out = io.StringIO()
    replay(db, learning.episodes[-1].thread_id, out=out)  # from the checkpoints alone
    assert f"run {learning.run_id}" in out.getvalue() and "weights v" in out.getvalue()
    from fakegang.report.build import build_report

    index = build_report(learning.run_id, db=db, out_dir=tmp_path / "report")
    assert index.exists()
    # the learned tables stay in the campaign's own database, never merged into --db
    conn = sqlite3.connect(db)
    tables = {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
    for table in tables & {"weight_versions", "credit", "insights", "experience", "reflections"}:
        assert conn.execute(f"select count(*) from {table}").fetchone()[0] == 0, table
    conn.close()
    assert learned(campaign_db_path(db, "learning", 0))["versions"]


def test_worker_processes_equal_sequential(sequential, tmp_path):
    db = tmp_path / "pool.sqlite"
    _same_as_sequential(sequential, _play(db, concurrency=2), db)


def test_a_killed_worker_plays_its_campaign_again_and_records_it_once(
    sequential, tmp_path, monkeypatch
):
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ENV_VAR, f"{marker}:step_env:5")
    db = tmp_path / "killed.sqlite"
    summary = _play(db, concurrency=2)
    assert marker.exists()  # a worker really was SIGKILLed in the middle of a round
    import tempfile
    from pathlib import Path

    conn = sqlite3.connect(db)
    tag = conn.execute("select settings from runs").fetchone()[0]
    conn.close()
    tag = json.loads(tag)["tag"]
    # the killed worker's shard directory was removed by the driver
    assert not list(Path(tempfile.gettempdir()).glob(f"fakegang-shard-campaign-{tag}-*"))
    _same_as_sequential(sequential, summary, db)


@pytest.mark.slow  # starts a local Ray instance
def test_local_ray_equals_sequential(sequential, tmp_path):
    # (Ray's retry of a SIGKILLed worker is tested on eval, tests/runs/test_scale_ray.py: the same
    # backend code; a campaign job's retry and merge are tested on the process pool above)
    ray = pytest.importorskip(
        "ray", reason='the ray extra is not installed (pip install "fakegang[ray]")'
    )
    db = tmp_path / "ray.sqlite"
    summary = _play(db, backend="ray", concurrency=2)
    assert not ray.is_initialized()  # the local instance it started is shut down
    _same_as_sequential(sequential, summary, db)


def test_merging_a_replayed_campaign_twice_records_it_once(sequential, tmp_path):
    _, seq_db = sequential
    db = tmp_path / "twice.sqlite"
    job = CampaignJob("retry123", "medium", "mixed", 0, 2, "fake", "learning", keep_shard=True)
    first = play_campaign_job(job, None)
    keep_campaign_db(db, job, first.shard)
    before = (rounds_recorded(db), row_counts(db))
    again = play_campaign_job(job, None)  # a retry: same tag, so the same threads and run id
    keep_campaign_db(db, job, again.shard)
    assert (rounds_recorded(db), row_counts(db)) == before
    assert before[1]["episodes"] == 2 and before[1]["runs"] == 1
    assert {k: v for k, v in before[0].items() if k[0] == "learning" and k[1] == 0} == {
        k: v for k, v in rounds_recorded(seq_db).items() if k[0] == "learning" and k[1] == 0
    }


def test_a_failed_campaign_is_reported_and_the_others_kept(tmp_path, monkeypatch, capsys):
    from fakegang.runs import campaign

    real = campaign.play_campaign

    def flaky(task, tactics, c, *args, **kw):
        if c == 1:
            raise RuntimeError("boom")
        return real(task, tactics, c, *args, **kw)

    monkeypatch.setattr(campaign, "play_campaign", flaky)
    db = tmp_path / "failed.sqlite"
    args = ["campaign", "--task", "medium", "--campaigns", "0-1", "--rounds", "1"]
    assert main([*args, "--model", "fake", "--db", str(db), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "1 campaign(s) failed" in err and "campaign 1 (learning): RuntimeError: boom" in err
    assert row_counts(db)["episodes"] == 1  # campaign 0 finished and is kept


BASE = ["campaign", "--task", "medium", "--campaigns", "0-1", "--rounds", "2", "--model", "fake"]


def test_bad_scale_settings_exit_2_before_playing(tmp_path, monkeypatch, capsys):
    assert main([*BASE, "--address", "auto"]) == 2
    assert "--address joins a Ray cluster" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*BASE, "--concurrency", "0"])
    capsys.readouterr()
    assert main([*BASE, "--from-db", str(tmp_path / "missing.sqlite")]) == 2
    assert "no such file" in capsys.readouterr().err
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 200)
    assert main([*BASE, "--from-db", str(junk)]) == 2
    assert "not a fakegang memory database" in capsys.readouterr().err
    memory = tmp_path / "mem.sqlite"
    from fakegang.tools.memory.store import Memory

    Memory(memory).close()
    assert main([*BASE, "--from-db", str(memory), "--db", str(memory)]) == 2
    assert "a database of its own" in capsys.readouterr().err
    from fakegang.graph.embedded_env import free_port

    assert main([*BASE, "--env-url", f"http://127.0.0.1:{free_port()}"]) == 2
    assert "no environment server answers" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    assert main([*BASE, "--backend", "ray"]) == 2
    assert 'pip install "fakegang[ray]"' in capsys.readouterr().err
    assert not list(tmp_path.glob("*-c0.sqlite"))  # nothing was played
    with pytest.raises(CampaignError, match="no campaigns"):
        run_campaigns(**{**SETTING, "campaigns": []}, compare=False)


def test_campaign_runs_cannot_be_resumed(tmp_path):
    from fakegang.runs.resume import ResumeError, resume_run
    from fakegang.tools.memory.store import Memory

    db = tmp_path / "c.sqlite"
    settings = {"kind": "campaign", "task": "medium", "tactics": "mixed", "campaign": 0,
                "rounds": 2, "mode": "learning", "model": "fake", "tag": "t"}  # fmt: skip
    memory = Memory(db)
    run = {"run_id": "campaign-t-learning-c0", "status": "interrupted", "model": "fake"}
    memory.upsert_run({**run, "settings": json.dumps(settings), "episodes_total": 2})
    memory.close()
    with pytest.raises(ResumeError, match="play the campaign again"):
        resume_run("campaign-t-learning-c0", db=str(db))


def test_campaign_progress_shows_campaigns_rounds_wins_and_eta():
    import io

    from fakegang.runs.progress import CampaignProgress

    stream = io.StringIO()
    bar = CampaignProgress(3, 2, "campaign medium", stream=stream)
    bar.update({"rounds": 2, "won": 1})
    bar.note("  learning campaign 1 round 1/2 ...")
    bar.update({"error": "x"})
    bar.update({"rounds": 2, "won": 2})
    lines = stream.getvalue().splitlines()
    assert "1/3 campaigns, rounds 2/6 won 1" in lines[0] and "ETA" in lines[0]
    assert lines[1] == "  learning campaign 1 round 1/2 ..."
    assert "3/3 campaigns, rounds 4/6 won 3 errors 1" in lines[-1] and "ETA" not in lines[-1]
