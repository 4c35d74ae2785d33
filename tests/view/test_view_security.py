"""Issue 40, the viewer: Host allow-list, security headers on every response (401, 303 and 500
included), no token in the access log, and a crafted table name cannot break /learning."""

from __future__ import annotations

import io
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from env_fixtures import free_port
from fastapi.testclient import TestClient
from view_fixtures import FAKEGANG

from fakegang.graph import resources
from fakegang.view.app import create_app

TOKEN = "a-view-token-long-enough-1234"
LOCAL = "http://127.0.0.1"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")


@pytest.fixture(scope="module")
def small_db(env_url, tmp_path_factory) -> Path:
    from runs_helpers import options

    from fakegang.runs.runner import train

    tmp = tmp_path_factory.mktemp("view-security")
    opts = options(tmp, env_url)
    opts.episodes = 1
    train(opts, out=io.StringIO())
    resources.reset_all()
    return Path(opts.db)


def test_a_foreign_host_is_refused(small_db) -> None:
    client = TestClient(create_app(small_db, allowed_hosts=LOOPBACK_HOSTS), base_url=LOCAL)
    assert client.get("/").status_code == 200
    for host in ("evil.example", "evil.example:8321"):
        r = client.get("/learning", headers={"Host": host}, follow_redirects=False)
        assert r.status_code == 400 and "evil" not in r.headers.get("location", "")


def test_headers_on_401_303_and_500(small_db) -> None:
    app = create_app(small_db, token=TOKEN, allowed_hosts=LOOPBACK_HOSTS)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("deliberate bug")

    client = TestClient(app, base_url=LOCAL, follow_redirects=False,
                        raise_server_exceptions=False)  # fmt: skip
    got = {
        401: client.get("/"),
        303: client.get("/", params={"token": TOKEN}),
        500: client.get("/boom", headers={"Authorization": f"Bearer {TOKEN}"}),
        400: client.get("/", headers={"Host": "evil.example"}),
    }
    for status, r in got.items():
        assert r.status_code == status
        assert r.headers.get("x-content-type-options") == "nosniff", status
        assert "default-src 'self'" in r.headers.get("content-security-policy", ""), status


def test_a_crafted_table_name_does_not_break_learning(small_db, tmp_path) -> None:
    db = tmp_path / "crafted.sqlite"
    db.write_bytes(small_db.read_bytes())
    conn = sqlite3.connect(db)
    conn.execute('create table "x"" yield" (a integer)')
    conn.execute('insert into "x"" yield" values (1)')
    conn.commit()
    conn.close()
    r = TestClient(create_app(db), raise_server_exceptions=False).get("/learning")
    assert r.status_code == 200, r.text[:300]


def test_view_keeps_the_token_out_of_its_access_log(small_db, tmp_path) -> None:
    port = free_port()
    log = tmp_path / "view.err"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [*FAKEGANG, "view", "--db", str(small_db), "--port", str(port), "--token", TOKEN,
             "--log-level", "info"],
            stdout=err, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/", params={"token": TOKEN},
                              follow_redirects=True)  # fmt: skip
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
                time.sleep(0.2)
        assert r.status_code == 200 and r.history[0].status_code == 303  # then the cookie
        r = httpx.get(f"http://127.0.0.1:{port}/", headers={"Host": "evil.example"})
        assert r.status_code == 400
        time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert "token=***" in text and TOKEN not in text, text[-2000:]
