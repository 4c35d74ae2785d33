"""Helpers shared by the environment-server tests (imported explicitly, not via conftest).

* `policy_trace`: play a built-in policy in-process and record its actions and observations,
  the reference every transport must reproduce exactly.
* `expected_wire`: the OpenEnv wire shape of an engine observation, built independently of the
  server code (reward/done lifted out, `metadata` kept inside).
* `ThreadedServer`: uvicorn serving an app object on a free 127.0.0.1 port in a thread (for
  OpenEnv's WebSocket client, which needs a real socket) without a second slow import.
* `ServerProcess`: the server as a real subprocess, stopped by its pid.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from fakegang_env.engine import Episode
from fakegang_env.policies import make_policy

Action = tuple[str, str | None]
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Trace:
    task: str
    seed: int
    actions: list[Action]
    observations: list[dict[str, Any]]  # observations[0] is the reset observation


def policy_trace(policy: str, task: str, seed: int, max_actions: int = 400) -> Trace:
    """Play `policy` on (task, seed) in-process and record every action and observation."""
    episode = Episode(task, seed, episode_id=None)
    agent = make_policy(policy, network=episode.network, seed=seed)
    obs = episode.observation()
    actions: list[Action] = []
    observations = [obs]
    while not episode.done and len(actions) < max_actions:
        action = agent.act(obs)
        obs = episode.step(*action)
        actions.append(action)
        observations.append(obs)
    return Trace(task, seed, actions, observations)


def replay_in_process(task: str, seed: int, actions: list[Action]) -> list[dict[str, Any]]:
    episode = Episode(task, seed, episode_id=None)
    return [episode.observation()] + [episode.step(*a) for a in actions]


def strip_episode_id(obs: dict[str, Any]) -> dict[str, Any]:
    """Observations of the same (task, seed, actions) differ only in their episode_id."""
    return {k: v for k, v in obs.items() if k != "episode_id"}


def expected_wire(obs: dict[str, Any]) -> dict[str, Any]:
    """OpenEnv's `{"observation", "reward", "done"}` for an engine observation dict."""
    inner = {k: v for k, v in obs.items() if k not in ("done", "reward")}
    inner["metadata"] = {}
    return {"observation": inner, "reward": obs["reward"], "done": obs["done"]}


def action_body(action: Action) -> dict[str, Any]:
    kind, account_id = action
    return (
        {"action_type": kind}
        if account_id is None
        else {"action_type": kind, "account_id": account_id}
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(base_url: str, timeout_s: float, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            if httpx.get(f"{base_url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.2)
    raise TimeoutError(f"server at {base_url} not healthy after {timeout_s} s ({last})")


class ThreadedServer:
    """`with ThreadedServer(app) as base_url:` runs uvicorn in a daemon thread."""

    def __init__(self, app: Any):
        import uvicorn

        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        base_url = f"http://127.0.0.1:{self.port}"
        wait_healthy(base_url, timeout_s=30.0)
        return base_url

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10.0)


class ServerProcess:
    """The server as a real process on 127.0.0.1; terminated (then killed) by its pid."""

    def __init__(self, argv: list[str], port: int, env: dict[str, str] | None = None):
        self.argv = argv
        self.port = port
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"fakegang-server-{port}.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerProcess:
        self._log = open(self.log_path, "w+b")  # noqa: SIM115 - closed in __exit__
        self.proc = subprocess.Popen(
            [sys.executable, *self.argv],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_healthy(self.base_url, timeout_s=120.0, proc=self.proc)
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._log.close()
        if not exc or exc[0] is None:
            self.log_path.unlink(missing_ok=True)  # kept only when something failed


def run_env_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """`fakegang env ...` (fakegang_env.cli) in-process: exit code, stdout, stderr."""
    from fakegang_env import cli

    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
