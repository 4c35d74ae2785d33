"""`fakegang studio`: LangGraph's dev server on our graph and SQLite file, offline.

It starts `langgraph dev` (langgraph-cli[inmem]) on 127.0.0.1 with the three variables that keep
it from calling out (CLI analytics, the package version check, LangSmith tracing), points the
graph at an environment server (an embedded one unless `--env-url`) and at the database through
`FAKEGANG_ENV_URL` / `FAKEGANG_DB_PATH`, then registers every episode thread of the database with
the server (`threads.create(thread_id=..., if_exists="do_nothing")`): the dev server only lists
threads it knows, and the checkpoints themselves are read from our file through
`langgraph.json`'s `checkpointer.path` (fakegang/runs/studio_checkpointer.py).

The Studio UI is a hosted web page (smith.langchain.com) that the *browser* loads; the server
needs no network. Offline, use the HTTP API (`langgraph_sdk`) or `fakegang replay`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import httpx

from fakegang.graph.context import STATE_DIR, env_var
from fakegang.runs.checkpoint_tables import table_names, thread_ids
from fakegang.runs.runner import environment
from fakegang.tools.memory.read_only import connect_read_only
from fakegang_env.server.serve_args import port_free

GRAPH_ID = "fakegang"
OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
}
READY_TIMEOUT_S = 180.0


class StudioError(RuntimeError):
    """The dev server cannot be started (missing CLI, config, or it exited)."""


def studio_state_dir() -> Path:
    """Where the dev server keeps its state and log: the project's state directory (git-ignored),
    so a `--db` elsewhere never gets `.langgraph_api/` and a log beside it."""
    return Path(STATE_DIR, "studio").resolve()


def project_config() -> Path:
    """langgraph.json at the project root (the package is installed editable)."""
    return Path(__file__).resolve().parents[2] / "langgraph.json"


def langgraph_executable() -> str:
    local = Path(sys.executable).parent / "langgraph"
    if local.exists():
        return str(local)
    found = shutil.which("langgraph")
    if not found:
        raise StudioError(
            "the `langgraph` command is missing: pip install 'langgraph-cli[inmem]' "
            "(part of the dev extra)"
        )
    return found


def cli_threads(db: str | Path) -> list[dict]:
    """Every episode thread of the database (UUID thread ids only) with its metadata."""
    if not Path(db).is_file():
        return []
    conn = connect_read_only(db)  # an older file: read through a migrated copy
    try:
        ids = thread_ids(conn)
        if not ids:
            return []
        meta: dict[str, dict] = {}
        if "episodes" in table_names(conn):
            conn.row_factory = sqlite3.Row
            for r in map(dict, conn.execute("select * from episodes")):
                meta[r["thread_id"]] = {
                    "fakegang_run": r["run_id"],  # "run_id" is reserved by the server
                    "episode": r["episode"],
                    "task": r["task"],
                    "seed": r["seed"],
                    "status": r["status"],
                    "kind": r["kind"],
                }
    finally:
        conn.close()
    out = []
    for tid in ids:
        try:
            uuid.UUID(tid)
        except ValueError:
            continue
        out.append({"thread_id": tid, **meta.get(tid, {})})
    return out


def register_threads(url: str, db: str | Path, graph_id: str = GRAPH_ID) -> int:
    """Make the dev server list the CLI's episodes; returns how many threads were sent."""
    # lazy: langgraph-sdk comes with the dev extra only (the Studio CLI needs it anyway)
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=url)
    threads = cli_threads(db)
    for t in threads:
        metadata = {"graph_id": graph_id, "source": "fakegang-cli"}
        metadata.update({k: v for k, v in t.items() if k != "thread_id" and v is not None})
        client.threads.create(thread_id=t["thread_id"], if_exists="do_nothing", metadata=metadata)
    return len(threads)


def wait_ready(
    url: str, proc: subprocess.Popen, log_path: Path, timeout_s: float = READY_TIMEOUT_S
) -> str:
    """Poll `/ok`; returns the URL that answered (langgraph dev moves to another port when
    its port is taken between our check and its bind, and says so in its log)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StudioError(f"langgraph dev exited with code {proc.returncode}")
        moved = _MOVED.search(log_path.read_text(errors="replace")) if log_path.exists() else None
        if moved:
            url = f"http://127.0.0.1:{moved.group(1)}"
        try:
            if httpx.get(f"{url}/ok", timeout=2.0).status_code == 200:
                return url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise StudioError(f"langgraph dev did not answer {url}/ok within {timeout_s:.0f} s")


_MOVED = re.compile(r"Port \d+ is already in use, using port (\d+) instead")


def stop_group(proc: subprocess.Popen) -> None:
    """Stop the dev server and its children (it runs in its own process group)."""
    if proc.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(path: Path, n: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def run_studio(
    db: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 2024,
    env_url: str | None = None,
    config: str | Path | None = None,
    workdir: str | Path | None = None,
    settings: Mapping[str, object] | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Start the dev server, register the CLI threads, serve until Ctrl-C / SIGTERM.

    `settings` (Context field -> value) become the graph's defaults through their environment
    variables, so Studio's runs use the model and settings given on the command line. Its
    episodes are recorded with kind `studio` and only read the memory unless `settings` has
    `learn` on. The server's state (`.langgraph_api/`, its log) lives in `workdir`, by default
    the project's state directory, not beside `db`."""

    db = Path(db).resolve()
    config = Path(config).resolve() if config else project_config()
    if not config.exists():
        raise StudioError(f"no LangGraph config at {config}")
    executable = langgraph_executable()
    workdir = Path(workdir).resolve() if workdir else studio_state_dir()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "langgraph-dev.log"
    if not port_free(port):
        raise StudioError(f"port {port} on 127.0.0.1 is in use: choose another with --port")
    os.environ.update(OFFLINE_ENV)
    # (fakegang/cli/runs.py has refused a non-loopback host unless --insecure)
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with environment(env_url) as live_env, open(log_path, "wb") as log:
            env = {
                **os.environ,
                **OFFLINE_ENV,
                **{env_var(k): str(v) for k, v in (settings or {}).items() if v is not None},
                env_var("db_path"): str(db),  # what the graph's Context reads
                env_var("env_url"): live_env,
                env_var("run_kind"): "studio",
            }
            argv = [executable, "dev", "--no-browser", "--no-reload", "--host", host]
            argv += ["--port", str(port), "--config", str(config)]
            proc = subprocess.Popen(
                argv,
                cwd=workdir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                try:
                    url = wait_ready(url, proc, log_path)
                except StudioError as exc:
                    raise StudioError(f"{exc}\n--- {log_path} ---\n{_tail(log_path)}") from None
                n = register_threads(url, db)
                print(
                    f"LangGraph dev server : {url} (analytics, version check, tracing off)",
                    file=out,
                )
                print(
                    f"Studio UI            : https://smith.langchain.com/studio/?baseUrl={url}"
                    " (a hosted page: the browser needs internet, the server does not)",
                    file=out,
                )
                print(f"Graph                : {GRAPH_ID} ({config})", file=out)
                print(f"Checkpoints + memory : {db}", file=out)
                print(
                    f"Environment server   : {live_env}{'' if env_url else ' (embedded)'}",
                    file=out,
                )
                print(f"Registered threads   : {n} episode threads from the database", file=out)
                print(f"Server log           : {log_path}", file=out)
                print("Ctrl-C stops the server.", file=out, flush=True)
                proc.wait()
                if proc.returncode not in (0, -signal.SIGTERM):
                    print(f"langgraph dev exited with code {proc.returncode}", file=out)
                    return 1
                return 0
            except KeyboardInterrupt:
                print("\nstopping the dev server", file=out, flush=True)
                return 0
            finally:
                stop_group(proc)
    finally:
        signal.signal(signal.SIGTERM, previous)
