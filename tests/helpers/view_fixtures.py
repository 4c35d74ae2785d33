"""Helpers of the viewer's tests (tests/view): run the real CLI, wait for `fakegang view`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

FAKEGANG = [sys.executable, "-m", "fakegang.cli.main"]


@dataclass(frozen=True)
class ViewDb:
    path: Path
    train_run: str  # 3 easy episodes
    campaign_run: str  # the learning campaign (its memory is beside the file)
    hard_run: str = ""  # one hard episode (a crowded case picture)
    static_run: str = ""  # the same campaign with learning off


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    out = subprocess.run(
        [*FAKEGANG, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out


def wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"fakegang view exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"fakegang view did not answer at {url}")


@contextmanager
def serving_viewer(db: Path) -> Iterator[str]:
    """`fakegang view` over `db` on a free 127.0.0.1 port, without a token; its base URL."""
    from env_fixtures import free_port

    port = free_port()
    proc = subprocess.Popen(
        [*FAKEGANG, "view", "--db", str(db), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "FAKEGANG_VIEW_TOKEN": ""},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/", proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
