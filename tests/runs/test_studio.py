"""`fakegang studio`: `langgraph dev` on 127.0.0.1, offline, on our graph and SQLite file.

One episode is played from the CLI first; then the dev server is started through our command
(which must set the offline variables itself: they are removed from its environment here), and
through the LangGraph SDK we see that CLI episode (registered thread, state, full history) and
play a new easy episode with the stand-in model, whose checkpoints land in our file.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from env_fixtures import free_port
from runs_helpers import checkpoint_count

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.runs.replay import replay
from fakegang.runs.runner import TrainOptions, episode_thread_id, train
from fakegang.runs.studio import OFFLINE_ENV, StudioError, cli_threads, run_studio
from fakegang.tools.memory.store import Memory

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240.0


def dev_server_pid(port: int) -> int | None:
    """The `langgraph dev` process listening on `port` (found through /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"dev" in argv and str(port).encode() in argv and any(b"langgraph" in a for a in argv):
            return int(entry.name)
    return None


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    pairs = (item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)
    return dict(pairs)


def test_studio_shows_cli_episodes_and_runs_one_through_the_sdk(env_url, tmp_path) -> None:
    from langgraph_sdk import get_sync_client

    db = tmp_path / "agent.sqlite"
    opts = TrainOptions(
        context=Context(model="fake", db_path=str(db)),
        env_url=env_url,
        task="easy",
        episodes=1,
        log_dir=str(tmp_path / "runs"),
    )
    cli_tid = episode_thread_id(train(opts, out=io.StringIO())["run_id"], 1)
    resources.reset_all()
    assert [t["thread_id"] for t in cli_threads(db)] == [cli_tid]

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_ENV}
    log = tmp_path / "studio.out"
    argv = [
        sys.executable,
        "-m",
        "fakegang.cli.main",
        "studio",
        "--db",
        str(db),
        "--port",
        str(port),
    ]
    argv += ["--env-url", env_url, "--workdir", str(tmp_path / "studio")]
    started = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen(
            argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    dev_pid = None
    try:
        while "Ctrl-C stops the server." not in log.read_text():
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() - started < START_TIMEOUT_S, log.read_text()[-3000:]
            time.sleep(0.5)
        print(f"studio ready after {time.monotonic() - started:.1f} s")
        assert "Registered threads   : 1 episode threads" in log.read_text()
        dev_pid = dev_server_pid(port)
        assert dev_pid is not None
        dev_env = environ_of(dev_pid)
        for key, value in OFFLINE_ENV.items():  # set by `fakegang studio` itself
            assert dev_env.get(key) == value
        assert dev_env["FAKEGANG_DB_PATH"] == str(db) and dev_env["FAKEGANG_ENV_URL"] == env_url

        client = get_sync_client(url=url)
        # the CLI episode: registered, its final state and full history served from our file
        assert cli_tid in [t["thread_id"] for t in client.threads.search(limit=100)]
        cli_state = client.threads.get_state(cli_tid)
        row = Memory(db).episode(cli_tid)
        assert cli_state["next"] == [] and cli_state["values"]["result"]["won"] == row["won"]
        assert cli_state["values"]["result"]["reward"] == row["reward"]
        history = client.threads.get_history(cli_tid, limit=1000)
        assert len(history) == checkpoint_count(db, cli_tid) > 50

        # one easy episode through the SDK with the stand-in model; db and env come from the
        # variables `fakegang studio` set (FAKEGANG_DB_PATH, FAKEGANG_ENV_URL)
        [assistant] = client.assistants.search(graph_id="fakegang")
        thread = client.threads.create(metadata={"graph_id": "fakegang"})
        tid = thread["thread_id"]
        values = client.runs.wait(
            tid,
            assistant["assistant_id"],
            input={"task": "easy", "seed": 7, "run_id": "studio-test", "episode": 1},
            context={"model": "fake"},
        )
        assert values["result"]["final_message"].startswith(("[WIN]", "[LOSS]"))
        history = client.threads.get_history(tid, limit=1000)
        assert len(history) == checkpoint_count(db, tid) > 50  # checkpoints in our SQLite file
        nodes = {n for h in history for n in h["next"]}
        assert {"observe", "rule_check", "llm_decide", "arbitrate", "step_env", "reflect"} <= nodes
        sdk_row = Memory(db).episode(tid)
        assert sdk_row["status"] == "finished" and sdk_row["run_id"] == "studio-test"
        # a Studio run reads the memory and is recorded as such, but teaches it nothing
        assert (sdk_row["kind"], sdk_row["learns"]) == ("studio", 0)
        assert Memory(db).reflection_for(tid) is None
        text = io.StringIO()
        assert replay(db, tid, out=text) == len(Memory(db).steps(tid)) > 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
        if dev_pid is not None and Path(f"/proc/{dev_pid}").exists():
            os.killpg(dev_pid, signal.SIGKILL)  # only if our command failed to stop it
            pytest.fail("fakegang studio left the dev server running")
    assert rc == 143
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/ok", timeout=2.0)


def test_studio_refuses_a_busy_port(tmp_path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(StudioError, match=f"port {port} on 127.0.0.1 is in use"):
            run_studio(tmp_path / "agent.sqlite", port=port, env_url="http://127.0.0.1:9")
    with pytest.raises(StudioError, match="no LangGraph config"):
        run_studio(tmp_path / "agent.sqlite", config=tmp_path / "missing.json")


def test_studio_state_lives_in_the_project_state_directory(tmp_path, monkeypatch) -> None:
    """Not beside a --db elsewhere: `.langgraph_api/` and the log go under checkpoints/studio,
    which git ignores."""
    from fakegang.runs.studio import studio_state_dir

    monkeypatch.chdir(tmp_path)
    assert studio_state_dir() == tmp_path / "checkpoints" / "studio"
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    paths = ["checkpoints/studio/.langgraph_api/x", "langgraph-dev.log", "reports/r1/index.html"]
    ignored = subprocess.run(
        ["git", "check-ignore", *paths], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert ignored.stdout.split() == paths
