"""`fakegang view` without a browser: bad input, the token rule, read-only access, live reads.

The app is driven through Starlette's TestClient (in-process HTTP) over the fixture database
(tests/view/conftest.py); the command's refusals through the real CLI entry point.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from env_fixtures import free_port
from starlette.testclient import TestClient
from view_fixtures import FAKEGANG, run_cli, wait_until_up

from fakegang.cli.main import main
from fakegang.view.app import create_app

TOKEN = "a-long-enough-token-for-tests-0123"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _threads(db: Path, run_id: str) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        q = "select thread_id from episodes where run_id = ? order by episode"
        return [r[0] for r in conn.execute(q, [run_id])]
    finally:
        conn.close()


# ------------------------------------------------------------------------------ bad input
def test_missing_database_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["view", "--db", str(tmp_path / "nope.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no database at")
    assert not (tmp_path / "nope.sqlite").exists()


def test_a_database_without_runs_is_refused(tmp_path, capsys):
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(str(other))
    conn.execute("create table t (x)")
    conn.commit()
    conn.close()
    before = _sha(other)
    assert main(["view", "--db", str(other)]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err
    assert _sha(other) == before


def test_binding_beyond_loopback_needs_a_token(view_db, capsys, monkeypatch):
    monkeypatch.delenv("FAKEGANG_VIEW_TOKEN", raising=False)
    assert main(["view", "--db", str(view_db.path), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "refusing to bind the viewer to 0.0.0.0" in err and "--token" in err
    assert main(["view", "--db", str(view_db.path), "--token", "short"]) == 2
    assert "at least 16 characters" in capsys.readouterr().err


def test_bad_port_is_refused_by_the_parser(view_db, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["view", "--db", str(view_db.path), "--port", "70000"])
    assert exc.value.code == 2
    assert "port must be 1-65535" in capsys.readouterr().err


def test_unknown_run_and_episode_are_404_with_a_message(view_db):
    client = TestClient(create_app(view_db.path))
    r = client.get("/runs/no-such-run")
    assert r.status_code == 404 and "unknown run" in r.text
    r = client.get("/episode/no-such-thread")
    assert r.status_code == 404 and "unknown episode" in r.text
    r = client.get("/api/episode/no-such-thread")
    assert r.status_code == 404 and r.json() == {"error": "unknown episode 'no-such-thread'"}


# ------------------------------------------------------------------------------ the token
def test_token_guards_every_page_and_is_accepted_as_header_cookie_or_once_in_the_query(view_db):
    client = TestClient(create_app(view_db.path, token=TOKEN), follow_redirects=False)
    assert client.get("/").status_code == 401
    assert client.get("/static/view.css").status_code == 401
    assert client.get("/", params={"token": "wrong-token-of-enough-length"}).status_code == 401
    assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    r = client.get("/learning", params={"token": TOKEN})
    assert r.status_code == 303 and r.headers["location"] == "/learning"
    assert "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
    assert client.get("/learning").status_code == 200  # the cookie the redirect set


# ------------------------------------------------------------------------------ read-only
def test_serving_every_page_never_writes_the_file(view_db, tmp_path):
    db = tmp_path / "copy.sqlite"
    shutil.copyfile(view_db.path, db)
    before, siblings = _sha(db), sorted(p.name for p in tmp_path.iterdir())
    port = free_port()
    proc = subprocess.Popen(
        [*FAKEGANG, "view", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/", proc)
        pages = ["/", "/learning", "/campaigns", f"/runs/{view_db.train_run}"]
        pages += [f"/episode/{t}" for t in _threads(db, view_db.train_run)]
        pages += [f"/api/episode/{t}" for t in _threads(db, view_db.campaign_run)]
        for p in pages:
            assert httpx.get(url + p, timeout=10).status_code == 200, p
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert _sha(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == siblings  # no -wal/-shm created


def test_a_campaign_round_falls_back_to_the_steps_table(view_db):
    """Campaign rounds checkpoint only at exit: the node outputs come from `steps`."""
    client = TestClient(create_app(view_db.path))
    thread = _threads(view_db.path, view_db.campaign_run)[0]
    data = client.get(f"/api/episode/{thread}").json()
    assert data["source"].startswith("steps table")
    assert data["campaign"] == 0 and data["round"] == 0 and data["tactics"] == "mixed"
    assert data["steps"] and "observe" not in data["steps"][0]["nodes"]
    assert data["case"]["diverged_at"] is None  # the round was rebuilt with its own playbook
    assert data["case"]["debrief"]["ring"]


def test_a_training_writing_the_file_is_seen_live(view_db, tmp_path):
    """The viewer opens the file per request: a run started after it is listed, and the
    writer is not blocked (it finishes while the viewer keeps reading)."""
    db = tmp_path / "live.sqlite"
    shutil.copyfile(view_db.path, db)
    client = TestClient(create_app(db))
    assert client.get("/").text.count("/runs/r") == 1
    writer = subprocess.Popen(
        [*FAKEGANG, "train", "--model", "fake", "--episodes", "2", "--task", "easy",
         "--db", str(db), "--log-dir", str(tmp_path / "logs")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        while writer.poll() is None:  # read while it writes
            assert client.get("/").status_code == 200
            time.sleep(0.05)
    finally:
        writer.wait(timeout=300)
    assert writer.returncode == 0, writer.stderr.read()[-2000:]
    assert client.get("/").text.count("/runs/r") == 2


def test_replay_still_works_next_to_the_viewer(view_db, tmp_path):
    thread = _threads(view_db.path, view_db.train_run)[0]
    db = tmp_path / "copy.sqlite"
    shutil.copyfile(view_db.path, db)
    out = run_cli("replay", thread, "--db", str(db))
    assert "end of episode" in out.stdout


# ------------------------------------------------------------------------------ history
def _public_records(db: Path, thread_id: str):
    """The node records `fakegang replay` reads (LangGraph's get_state_history)."""
    from fakegang.runs.replay import head_branch, node_records
    from fakegang.view.checkpoints import _compiled
    from fakegang.view.db import read_only

    with read_only(db) as conn:
        chain, _ = head_branch(_compiled(conn), thread_id)
    return node_records(chain)


KEYS = ("view", "rule", "choices", "llm", "decision", "alpha", "last", "done", "result", "tally")


def test_node_outputs_from_writes_equal_the_replay_history_forks_and_pruning_included(
    view_db, tmp_path
):
    from fakegang.view.checkpoints import records_from_writes
    from fakegang.view.db import read_only
    from fakegang.view.episode import load_episode

    db = tmp_path / "copy.sqlite"
    shutil.copyfile(view_db.path, db)
    parent = _threads(db, view_db.train_run)[0]
    out = run_cli("fork", parent, "--at", "2", "--action", "submit", "--db", str(db))
    fork = next(w for w in out.stdout.split() if w.count("-") == 4 and w != parent)
    for thread in [*_threads(db, view_db.train_run), fork]:
        public = _public_records(db, thread)
        with read_only(db) as conn:
            mine, head, length, _ = records_from_writes(conn, thread)
        assert [r.node for r in mine] == [r.node for r in public]
        assert [r.checkpoint_id for r in mine] == [r.checkpoint_id for r in public]
        for a, b in zip(mine, public, strict=True):
            assert {k: a.values.get(k) for k in KEYS} == {k: b.values.get(k) for k in KEYS}
    data = load_episode(db, fork)
    assert data["fork"]["parent_thread_id"] == parent
    assert "fork" in data["steps"][2]["nodes"]
    assert data["steps"][2]["nodes"]["fork"]["decision"]["action"] == "submit"
    # pruned: only the head checkpoint is left, the steps table speaks for the actions
    run_cli("prune", "--keep-last", "0", "--db", str(db))
    data = load_episode(db, parent)
    assert data["checkpoints"] == 1 and data["source"].startswith("steps table")
    assert len(data["steps"]) == len(_steps(db, parent))
    assert data["case"]["diverged_at"] is None


def _steps(db: Path, thread_id: str) -> list:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute("select idx from steps where thread_id = ?", [thread_id]).fetchall()
    finally:
        conn.close()


def test_a_trace_yields_table_is_shown_as_it_is_when_present(view_db, tmp_path):
    """Any `*yield*` table is listed raw, whatever its columns; without one, no section."""
    bare = tmp_path / "bare.sqlite"
    shutil.copyfile(view_db.path, bare)
    conn = sqlite3.connect(str(bare))
    conn.execute("drop table if exists trace_yields")
    conn.commit()
    conn.close()
    assert "Trace yields" not in TestClient(create_app(bare)).get("/learning").text
    db = tmp_path / "copy.sqlite"
    shutil.copyfile(bare, db)
    conn = sqlite3.connect(str(db))
    conn.execute("create table trace_yields (trace text, members int, innocents int)")
    conn.execute("insert into trace_yields values ('shared_ip', 4, 1), ('cofollow', 2, 3)")
    conn.commit()
    conn.close()
    page = TestClient(create_app(db)).get("/learning").text
    assert "Trace yields (trace_yields)" in page
    assert "<td>shared_ip</td><td>4</td><td>1</td>" in page.replace("\n", "")
