"""`fakegang view` without a browser: bad input, the token rule, read-only access, live reads.

The app is driven through Starlette's TestClient (in-process HTTP) over the fixture database
(tests/view/conftest.py); the command's refusals through the real CLI entry point.
"""

from __future__ import annotations

import hashlib
import json
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
    assert data["source"] == "steps" and "not kept" in data["source_note"]
    assert data["campaign"] == 0 and data["round"] == 0 and data["tactics"] == "mixed"
    # observe's evidence is kept in the step rows: the first action saw the starting accounts
    first = data["steps"][0]["nodes"]["observe"]["view"]
    assert first["visible"] == len(data["case"]["starting"]) and first["inspected"] == 0
    assert all("observe" in s["nodes"] for s in data["steps"])
    assert data["case"]["diverged_at"] is None  # the round was rebuilt with its own playbook
    assert data["case"]["debrief"]["ring"]
    # a later round's evidence is scored with the weights it pinned, from the campaign's memory
    later = client.get(f"/api/episode/{_threads(view_db.path, view_db.campaign_run)[2]}").json()
    assert later["weights_source"].startswith("weights v")
    assert later["case"]["why"] and all(
        w["evidence"]["features"] for w in later["case"]["why"].values() if w["flagged"] is not None
    )


def test_a_training_writing_the_file_is_seen_live(view_db, tmp_path):
    """The viewer opens the file per request: a run started after it is listed, and the
    writer is not blocked (it finishes while the viewer keeps reading)."""
    db = tmp_path / "live.sqlite"
    shutil.copyfile(view_db.path, db)
    client = TestClient(create_app(db))
    runs_before = client.get("/").text.count("/runs/r")
    assert runs_before >= 1
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
    assert client.get("/").text.count("/runs/r") == runs_before + 1


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
    assert data["checkpoints"] == 1 and data["source"] == "steps"
    assert len(data["steps"]) == len(_steps(db, parent))
    # observe's evidence survives the pruning, equal to what the checkpoints held
    before = [
        r.values["view"] for r in _public_records(view_db.path, parent) if r.node == "observe"
    ]
    assert [s["nodes"]["observe"]["view"] for s in data["steps"]] == before
    assert data["case"]["diverged_at"] is None


def _steps(db: Path, thread_id: str) -> list:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute("select idx from steps where thread_id = ?", [thread_id]).fetchall()
    finally:
        conn.close()


def test_trace_yields_are_summarised_per_trace_and_what_moved_is_named(view_db, tmp_path):
    """A memory without trace yields has no such section; with them, each trace shows its
    shipped and latest yield, and one that moved is named in the summary."""
    bare = tmp_path / "bare.sqlite"
    shutil.copyfile(view_db.path, bare)
    conn = sqlite3.connect(str(bare))
    conn.execute("delete from trace_yields")
    conn.commit()
    conn.close()
    assert "trace yields (" not in TestClient(create_app(bare)).get("/learning").text
    conn = sqlite3.connect(str(bare))
    conn.executemany(
        "insert into trace_yields (key, thread_id, task, trace, pivots, members, page_members, "
        "page_innocents, estimate, created_at) values (?, ?, 'easy', ?, 2, 1.0, 3, 4, ?, ?)",
        [("t1:ip", "t1", "ip", 7.0, "2026-01-01"), ("t2:ip", "t2", "ip", 4.5, "2026-01-02"),
         ("t1:photo", "t1", "photo", 3.0, "2026-01-01")],
    )  # fmt: skip
    conn.commit()
    conn.close()
    page = TestClient(create_app(bare)).get("/learning").text
    assert "trace yields (2 traces; the latest 3 rows)" in page
    assert "easy ip 9.0 → 4.5" in page  # the shipped easy ip yield is 9.0: it moved
    assert "photo 3.0 →" not in page  # photo stayed at its shipped 3.0


def _copy_with_campaign_settings(view_db, tmp_path) -> tuple:
    """A copy of the fixture database (its side files stay behind) and its campaign's settings."""
    db = tmp_path / "runs.sqlite"
    shutil.copyfile(view_db.path, db)
    conn = sqlite3.connect(str(db))
    settings = json.loads(
        conn.execute(
            "select settings from runs where run_id = ?", [view_db.campaign_run]
        ).fetchone()[0]
    )
    conn.close()
    return db, settings


def test_learning_reads_each_campaigns_own_memory_and_says_when_it_is_gone(view_db, tmp_path):
    from fakegang.view.memories import side_file

    db, settings = _copy_with_campaign_settings(view_db, tmp_path)
    source = side_file(view_db.path, settings)
    page = TestClient(create_app(db)).get("/learning").text
    assert "learning campaign 0" not in page  # not copied yet: the page says it is missing
    assert (
        f"{view_db.campaign_run}: its memory {side_file(db, settings).name} is not beside" in page
    )
    shutil.copyfile(source, side_file(db, settings))
    page = TestClient(create_app(db)).get("/learning").text
    assert "learning campaign 0" in page and "is not beside" not in page
    assert "No insight recorded in this memory" not in page.split("learning campaign 0")[1]
    # a side file of another invocation (no such run row) is not taken for this campaign's
    conn = sqlite3.connect(str(side_file(db, settings)))
    conn.execute("delete from runs")
    conn.commit()
    conn.close()
    assert "is not beside" in TestClient(create_app(db)).get("/learning").text


def test_the_operators_move_is_shown_next_to_each_round(view_db, tmp_path):
    """An adaptive campaign round's debrief (`operator` on its final observation) names the
    operator's move: the learning page shows it in words next to that round's refit."""
    from fakegang.view.memories import side_file

    db, settings = _copy_with_campaign_settings(view_db, tmp_path)
    side = side_file(db, settings)
    shutil.copyfile(side_file(view_db.path, settings), side)
    conn = sqlite3.connect(str(side))
    first = conn.execute(
        "select thread_id from episodes where run_id = ? order by episode", [view_db.campaign_run]
    ).fetchone()[0]
    obs = json.loads(
        conn.execute(
            "select observation from observations where thread_id = ?", [first]
        ).fetchone()[0]
    )
    obs["operator"] = {"round": 0, "playbook": {"ip": 0.2, "content": 1.0}, "cost": 1.2,
                       "members": 10, "caught": 4, "survival": 0.6,
                       "reason": "ip pivots found it", "move": "ip"}  # fmt: skip
    conn.execute(
        "update observations set observation = ? where thread_id = ?", [json.dumps(obs), first]
    )
    conn.commit()
    conn.close()
    page = TestClient(create_app(db)).get("/learning").text
    cells = page.split('class="left operator">')[1:]
    assert len(cells) == 3
    assert cells[0].startswith("ip pivots found it · survival 0.60 (4 of 10 caught)")
    assert cells[1].startswith("–") and cells[2].startswith("–")


def test_case_file_lists_the_flagged_accounts_with_their_evidence(view_db):
    client = TestClient(create_app(view_db.path))
    thread = _threads(view_db.path, view_db.train_run)[0]
    final = json.loads(_final_observation(view_db.path, thread))
    ring, flagged = set(final["ring_ids"]), set(final["flagged_ids"])
    cf = client.get(f"/episode/{thread}/case-file?format=json").json()
    assert {e["account"] for e in cf["flagged"]} == flagged
    assert {e["account"] for e in cf["missed"]} == ring - flagged
    from fakegang.view.casefile import DECIDED_BY

    conn = sqlite3.connect(f"file:{view_db.path}?mode=ro&immutable=1", uri=True)
    modes = dict(conn.execute("select idx, mode from steps where thread_id = ?", [thread]))
    conn.close()
    for e in cf["flagged"]:
        assert e["member"] == (e["account"] in ring)
        assert e["flagged_at"] is not None and e["evidence"]["features"]
        assert e["flagged_by"] == DECIDED_BY[modes[e["flagged_at"]]]  # who decided that flag
    md = client.get(f"/episode/{thread}/case-file?format=md")
    assert md.headers["content-type"].startswith("text/markdown")
    assert all(f"### {a}:" in md.text for a in flagged)
    html = client.get(f"/episode/{thread}/case-file")
    assert html.status_code == 200 and "Case file: episode" in html.text
    bad = client.get(f"/episode/{thread}/case-file?format=pdf")
    assert bad.status_code == 400 and "html, md or json" in bad.text
    assert client.get("/episode/nope/case-file").status_code == 404


def _final_observation(db: Path, thread_id: str) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute(
            "select observation from observations where thread_id = ?", [thread_id]
        ).fetchone()[0]
    finally:
        conn.close()


def test_evidence_contributions_add_up_to_the_profile_score(view_db):
    """Each listed contribution is weight x value, and with every feature listed the bias plus
    the contributions is the profile model's log-odds."""
    import math

    from fakegang.view import explain
    from fakegang.view.episode import load_episode

    thread = _threads(view_db.path, view_db.train_run)[0]
    old = explain.TOP_FEATURES
    explain.TOP_FEATURES = 100
    try:
        why = load_episode(view_db.path, thread)["case"]["why"]
    finally:
        explain.TOP_FEATURES = old
    checked = 0
    for w in why.values():
        e = w["evidence"]
        if not e or e["model"] != "profile":
            continue
        z = e["bias"] + sum(f[2] for f in e["features"])
        assert abs(1 / (1 + math.exp(-z)) - e["profile_score"]) < 0.01
        checked += 1
    assert checked > 0


def test_the_crowd_is_grouped_per_revealing_action_and_levels_fill_outwards():
    from fakegang.view.layout import group_case

    def acc(aid, seen, by=None, inspected=None, flags=()):
        return {"id": aid, "seen": seen, "by": by, "inspected": inspected, "flags": list(flags)}

    accounts = [acc("s1", -1, inspected=0), acc("a", 0, "inspect s1"), acc("b", 0, "inspect s1"),
                acc("c", 0, "inspect s1", inspected=1), acc("d", 1, "inspect c", flags=[[2, None]]),
                acc("e", 1, "inspect c"), acc("p", 3, "pivot c ip")]  # fmt: skip
    crowds = group_case(accounts, {"a": "s1", "b": "s1", "c": "s1", "d": "c", "e": "c", "p": "c"})
    assert [(c["at"], c["members"], c["source"]) for c in crowds] == [
        (0, ["a", "b"], "s1"), (1, ["e"], "c")]  # fmt: skip
    alone = {a["id"]: a["level"] for a in accounts if a["cluster"] is None}
    assert alone == {"s1": 0, "c": 1, "d": 1, "p": 1}
    assert all(c["level"] > max(alone.values()) for c in crowds)


def test_beyond_three_memories_the_learning_page_folds_the_rest(view_db, tmp_path):
    """A sweep of many campaigns keeps the page short: the first three memories are open, the
    others fold to one line each (their summary)."""
    from fakegang.view.memories import side_file

    db = tmp_path / "runs.sqlite"
    shutil.copyfile(view_db.path, db)
    conn = sqlite3.connect(str(db))
    row = conn.execute("select * from runs where run_id = ?", [view_db.campaign_run]).fetchone()
    cols = [d[0] for d in conn.execute("select * from runs limit 0").description]
    source = side_file(view_db.path, json.loads(row[cols.index("settings")]))
    for n in range(4):
        settings = {**json.loads(row[cols.index("settings")]), "campaign": n}
        values = dict(zip(cols, row, strict=True))
        values.update(run_id=f"{view_db.campaign_run}-copy{n}", settings=json.dumps(settings))
        marks = ", ".join("?" for _ in cols)
        conn.execute(
            f"insert into runs ({', '.join(cols)}) values ({marks})", list(values.values())
        )
        side = side_file(db, settings)
        shutil.copyfile(source, side)
        s = sqlite3.connect(str(side))
        s.execute(f"insert into runs ({', '.join(cols)}) values ({marks})", list(values.values()))
        s.commit()
        s.close()
    conn.commit()
    conn.close()
    page = TestClient(create_app(db)).get("/learning").text
    # this file's memory, then 4 copies plus the original campaign 0 (whose file is now a copy's)
    assert page.count('<section class="memory"') == 6
    assert page.count('<details class="memory-fold">') == 3
    assert "learning campaign 3: " in page.split('<details class="memory-fold">')[-1]


def test_why_scores_are_the_rule_engines_own_at_the_flag(view_db):
    """The evidence a panel shows is the score the rule engine flagged on: where the rule
    proposed the flag, its reason's "evidence score P" is the panel's P(ring), for trainings
    (shipped, starting and refit weights) and campaign rounds (weights from the side file)."""
    import re

    from fakegang.view.episode import load_episode

    checked = 0
    for run in (view_db.train_run, view_db.hard_run, view_db.campaign_run):
        for thread in _threads(view_db.path, run):
            data = load_episode(view_db.path, thread)
            steps = {
                s["nodes"]["arbitrate"]["decision"]["index"]: s["nodes"]["rule_check"]["rule"]
                for s in data["steps"]
                if "arbitrate" in s["nodes"]
            }
            actions = [
                (s["nodes"].get("arbitrate") or {}).get("decision", {}).get("action")
                for s in data["steps"]
            ]
            for w in data["case"]["why"].values():
                k = w.get("flagged")
                if k is None or k not in steps or steps[k]["action"] != actions[k]:
                    continue
                m = re.match(r"evidence score (\d\.\d\d)", steps[k]["reason"] or "")
                if not m:
                    continue
                assert abs(w["evidence"]["score"] - float(m.group(1))) <= 0.006, (thread, w)
                checked += 1
    assert checked >= 10


def test_a_file_with_nothing_learned_says_so(view_db, tmp_path):
    """No refit, credit, insight or α anywhere (an eval-only file): one sentence, no chart."""
    db = tmp_path / "bare.sqlite"
    shutil.copyfile(view_db.path, db)
    conn = sqlite3.connect(str(db))
    for table in ("weight_versions", "credit", "insights", "alpha", "trace_yields"):
        conn.execute(f"drop table if exists {table}")
    conn.execute("delete from runs where run_id like 'campaign-%'")
    conn.execute("update episodes set status = 'running'")
    conn.commit()
    conn.close()
    page = TestClient(create_app(db)).get("/learning")
    assert page.status_code == 200
    assert "No memory has learned anything yet" in page.text
    assert "No finished episode yet." in page.text and "<svg" not in page.text
