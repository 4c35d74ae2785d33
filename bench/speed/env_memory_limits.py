"""Resident memory of one environment server filled to its limits: the check behind
`openenv.yaml`'s `memory_mb` (issue 40 measured 573 MB at the then defaults, over 512 MB).

    python bench/speed/env_memory_limits.py [--max-episodes N] [--max-ws N] [--json]

A fresh server process (`python -m fakegang_env.server.app`, the caps given or its defaults) is
filled with hard episodes: as many HTTP episodes as its HTTP cap (`POST /reset`, one
`episode_id` each) and as many `/ws` sessions as its WebSocket cap, each reset to a hard episode
and held open at once. Reported: resident memory idle, filled, and the peak (VmHWM, from
/proc), and whether one more HTTP episode is refused (503: the cap holds).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the checkout: bench.* imports

from bench.speed import env_speed  # noqa: E402  (the server process and a free port)
from fakegang_env.server.app import DEFAULT_MAX_WS_SESSIONS  # noqa: E402
from fakegang_env.server.sessions import DEFAULT_MAX_EPISODES  # noqa: E402
from fakegang_env.validation.wire import WsSession  # noqa: E402


def _kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def start(port: int, max_episodes: int, max_ws: int) -> subprocess.Popen:
    env = {**os.environ, "FAKEGANG_MAX_EPISODES": str(max_episodes),
           "FAKEGANG_MAX_WS_SESSIONS": str(max_ws)}  # fmt: skip
    env.pop("FAKEGANG_ENV_TOKEN", None)
    return env_speed.start_server(port, env)


def run(max_episodes: int, max_ws: int) -> dict[str, Any]:
    port = env_speed.free_port()
    url = f"http://127.0.0.1:{port}"
    server = start(port, max_episodes, max_ws)
    try:
        idle = _kb(server.pid, "VmRSS") / 1024
        with httpx.Client(base_url=url, timeout=120) as client, ExitStack() as stack:
            for i in range(max_episodes):
                r = client.post("/reset", json={"task": "hard", "seed": i, "episode_id": f"m{i}"})
                r.raise_for_status()
            extra = client.post("/reset", json={"task": "hard", "seed": 0, "episode_id": "over"})
            for i in range(max_ws):
                session = stack.enter_context(WsSession(url, timeout_s=300))
                session.reset(task="hard", seed=10_000 + i)
            filled = _kb(server.pid, "VmRSS") / 1024
            peak = _kb(server.pid, "VmHWM") / 1024
        return {
            "max_episodes": max_episodes,
            "max_ws_sessions": max_ws,
            "idle_rss_mb": round(idle, 1),
            "filled_rss_mb": round(filled, 1),
            "peak_rss_mb": round(peak, 1),
            "over_cap_status": extra.status_code,
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-episodes", type=int, default=DEFAULT_MAX_EPISODES)
    parser.add_argument("--max-ws", type=int, default=DEFAULT_MAX_WS_SESSIONS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    r = run(args.max_episodes, args.max_ws)
    if args.json:
        print(json.dumps(r))
    else:
        print(
            f"{r['max_episodes']} HTTP + {r['max_ws_sessions']} /ws hard episodes: resident "
            f"memory idle {r['idle_rss_mb']:.0f} MB, filled {r['filled_rss_mb']:.0f} MB, peak "
            f"{r['peak_rss_mb']:.0f} MB; one more HTTP episode: {r['over_cap_status']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
