"""`fakegang eval --backend ray`: a local Ray instance (with a worker SIGKILLed mid-episode and
retried by Ray) and a real two-node cluster started with `ray start` on this machine; both must
record exactly what sequential play records."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scale_helpers import copy_db, duplicates, recorded, sequential_eval, trained_memory

ray = pytest.importorskip(
    "ray", reason='the ray extra is not installed (pip install "fakegang[ray]")'
)

from fakegang.graph.embedded_env import free_port  # noqa: E402
from fakegang.runs.backends import RAY_NICENESS_VAR  # noqa: E402
from fakegang.runs.evaluation import comparable, evaluate  # noqa: E402
from fakegang.runs.worker import KILL_ENV_VAR  # noqa: E402

SEEDS = list(range(4))
RAY = str(Path(sys.executable).with_name("ray"))


@pytest.fixture(scope="module")
def memory_db(tmp_path_factory, env_url):
    return trained_memory(tmp_path_factory.mktemp("ray_mem"), env_url)


@pytest.fixture(scope="module")
def sequential(memory_db, env_url, tmp_path_factory):
    return sequential_eval(
        memory_db, env_url, tmp_path_factory.mktemp("ray_seq") / "seq.sqlite", SEEDS
    )


@pytest.mark.slow  # starts a local Ray instance
def test_local_ray_equals_sequential_and_retries_a_killed_worker(
    sequential, memory_db, tmp_path, monkeypatch
):
    seq_db, seq = sequential
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ENV_VAR, f"{marker}:step_env:2")
    db = copy_db(memory_db, tmp_path / "ray.sqlite")
    res = evaluate(task="easy", seeds=SEEDS, model="fake", db=db, backend="ray", concurrency=2)
    assert not ray.is_initialized()  # the local instance it started is shut down
    assert marker.exists()  # a Ray worker process really was SIGKILLed mid-episode
    assert res["errors"] == 0 and res["backend"] == "ray (local, 2 CPUs)"
    assert comparable(res["results"]) == comparable(seq["results"])
    assert recorded(db, res["run_id"]) == recorded(seq_db, seq["run_id"])
    assert duplicates(db) == 0
    # Ray's default niceness 15 for workers is lifted in the local instance: they run as the
    # driver does (and the setting does not leak into this process's environment)
    assert {r["worker"]["nice"] for r in res["results"]} == {os.nice(0)}
    assert RAY_NICENESS_VAR not in os.environ


@contextlib.contextmanager
def ray_cluster(tmp_path: Path):
    """A head and a second node (`ray start --block`, 1 CPU each) in their own process groups,
    which the test ends (SIGTERM, then SIGKILL). Token auth with a throw-away token: Ray turns
    it on for `ray start --head` whenever ~/.ray/auth_token exists."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(16),
    }
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    temp_dir = Path("/tmp") / f"fg-ray-{os.getpid()}"  # short: Ray's socket paths are limited
    procs: list[subprocess.Popen] = []

    def start(*args: str) -> None:
        log = (tmp_path / f"node{len(procs)}.log").open("w")
        procs.append(
            subprocess.Popen(
                [RAY, "start", *args, *common],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    try:
        start("--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp_dir}")
        _wait(lambda: _status_ok(address, env), "the Ray head", procs)
        start(f"--address={address}")
        _wait(lambda: _alive_nodes(address, env) == 2, "the second Ray node", procs)
        yield address, env
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        subprocess.run(["rm", "-rf", str(temp_dir)], check=False)


def _status_ok(address: str, env: dict) -> bool:
    cmd = [RAY, "status", f"--address={address}"]
    return subprocess.run(cmd, env=env, capture_output=True, timeout=60).returncode == 0


def _alive_nodes(address: str, env: dict) -> int:
    code = "import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
    code += "print(sum(n['Alive'] for n in ray.nodes()))"
    out = subprocess.run(
        [sys.executable, "-c", code, address], env=env, capture_output=True, text=True, timeout=90
    )
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


def _wait(ok, what: str, procs: list[subprocess.Popen], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            raise RuntimeError(f"a `ray start` process exited while waiting for {what}")
        if ok():
            return
        time.sleep(1)
    raise TimeoutError(f"{what} did not come up in {timeout_s:.0f} s")


@pytest.mark.slow
def test_two_node_cluster_records_what_sequential_play_records(sequential, memory_db, tmp_path):
    """The driver is a `fakegang eval` process: Ray keeps one auth setting per process, and this
    one may already have run a local instance without a token."""
    seq_db, seq = sequential
    db = copy_db(memory_db, tmp_path / "cluster.sqlite")
    out = tmp_path / "rows.jsonl"
    with ray_cluster(tmp_path) as (address, env):
        cmd = [str(Path(sys.executable).with_name("fakegang")), "eval", "--task", "easy"]
        cmd += ["--seeds", f"0-{len(SEEDS) - 1}", "--model", "fake", "--db", db, "--json"]
        cmd += ["--backend", "ray", "--address", address, "--out", str(out)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["errors"] == 0 and summary["backend"] == f"ray ({address})"
    assert f"{len(SEEDS)}/{len(SEEDS)}" in proc.stderr  # the progress line
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len({r["worker"]["node"] for r in rows}) == 2  # both nodes played episodes
    assert comparable(rows) == comparable(seq["results"])
    assert recorded(db, summary["run_id"]) == recorded(seq_db, seq["run_id"])
    assert duplicates(db) == 0
