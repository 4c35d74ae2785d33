"""Fixtures of the viewer's tests: a database a short real training and a tiny campaign wrote,
and `fakegang view` serving it on 127.0.0.1.

All are played by the real CLI (`--model fake`: the deterministic stand-in, so the checks do not
depend on a model's randomness): a 3-episode easy training, a 1-episode hard training (a crowded
case picture), then a three-round campaign played with `--compare` (learning against the fixed
baseline) merged into the same file with `--db`, its learning memory kept beside the file, so
one viewer shows every page.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from view_fixtures import ViewDb, run_cli, serving_viewer


@pytest.fixture(scope="session")
def view_db(tmp_path_factory) -> ViewDb:
    tmp = tmp_path_factory.mktemp("view")
    db = tmp / "runs.sqlite"
    run_cli("train", "--model", "fake", "--episodes", "3", "--task", "easy",
            "--db", str(db), "--log-dir", str(tmp / "logs"))  # fmt: skip
    run_cli("train", "--model", "fake", "--episodes", "1", "--task", "hard",
            "--db", str(db), "--log-dir", str(tmp / "logs"))  # fmt: skip
    run_cli("campaign", "--task", "easy", "--rounds", "3", "--model", "fake", "--compare",
            "--db", str(db), "--no-progress")  # fmt: skip
    conn = sqlite3.connect(str(db))
    try:
        runs = {}
        for run_id, settings in conn.execute("select run_id, settings from runs"):
            s = json.loads(settings or "{}")
            task = conn.execute(
                "select task from episodes where run_id = ? limit 1", [run_id]
            ).fetchone()
            key = s.get("mode") if s.get("kind") == "campaign" else (task[0] if task else "")
            runs[key] = run_id
    finally:
        conn.close()
    return ViewDb(db, runs["easy"], runs["learning"], runs["hard"], runs["static"])


@pytest.fixture(scope="session")
def viewer(view_db: ViewDb):
    """The base URL of `fakegang view` over the fixture database."""
    with serving_viewer(view_db.path) as url:
        yield url
