"""Resource figures of one environment server process: the source of `openenv.yaml`'s
`validation.resources` (cpu, memory_mb, disk_mb, episode_timeout_s).

    python bench/speed/env_resources.py [--episodes 3] [--sessions 8] [--json]

A fresh server process (`python -m fakegang_env.server.app`) is measured from outside through
Linux /proc while it serves, over `/ws` (the transport OpenEnv's validator uses):
* sequential episodes of every task with the `random` policy (the longest legal episodes) and
  the `flag_everything` canary (the largest observations: every visible account flagged);
* then `--sessions` hard random episodes at once, one `/ws` session each.
Reported: peak resident memory (VmHWM), CPU cores used while busy (CPU seconds / wall seconds),
bytes the process wrote to storage (/proc/pid/io write_bytes), the slowest single episode and
the time to a healthy server. The manifest declares these with headroom (see the README).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.speed import env_speed  # noqa: E402  (free_port, start_server, process_cpu_s)
from bench.speed.timing import lap, timed  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.policies import RandomPolicy, play_recorded  # noqa: E402
from fakegang_env.tasks import TASK_NAMES  # noqa: E402
from fakegang_env.validation.canaries import STRATEGIES  # noqa: E402
from fakegang_env.validation.wire import WsSession, action_dict  # noqa: E402


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def _write_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    raise KeyError("write_bytes")


def random_actions(task: str, seed: int) -> list[tuple[str, str | None]]:
    return play_recorded(Episode(task, seed), RandomPolicy(seed))


def play(url: str, task: str, seed: int, actions: list[tuple[str, str | None]]) -> float:
    """Wall seconds of one whole episode over `/ws`, reset to the terminal step."""
    took: list[float] = []
    with lap(took), WsSession(url, timeout_s=300) as session:
        session.reset(task=task, seed=seed)
        for action in actions:
            result = session.step(action_dict(*action))
        if not result["done"]:
            raise RuntimeError(f"{task}/{seed}: the episode did not end")
    return took[0]


def run(episodes: int = 3, sessions: int = 8) -> dict[str, Any]:
    port = env_speed.free_port()
    server, startup_s = timed(env_speed.start_server, port)
    url = f"http://127.0.0.1:{port}"
    pid = server.pid
    try:
        idle_rss_mb = _status_kb(pid, "VmRSS") / 1024
        writes_before = _write_bytes(pid)
        cpu_before, busy = env_speed.process_cpu_s(pid), []
        episode_s: dict[str, float] = {}
        concurrent_s: list[float] = []
        with lap(busy):
            for task in TASK_NAMES:
                for seed in range(episodes):
                    took = play(url, task, seed, random_actions(task, seed))
                    worst = episode_s.get(f"{task}/random", 0.0)
                    episode_s[f"{task}/random"] = max(worst, took)
                gaming = STRATEGIES["flag_everything"](Episode(task, 0))
                episode_s[f"{task}/flag_everything"] = play(url, task, 0, gaming)
            hard = {seed: random_actions("hard", seed) for seed in range(sessions)}
            threads = [
                threading.Thread(
                    target=lambda s=s: concurrent_s.append(play(url, "hard", s, hard[s]))
                )
                for s in hard
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        busy_s = busy[0]
        cpu_s = env_speed.process_cpu_s(pid) - cpu_before
        return {
            "startup_s": round(startup_s, 2),
            "idle_rss_mb": round(idle_rss_mb, 1),
            "peak_rss_mb": round(_status_kb(pid, "VmHWM") / 1024, 1),
            "cpu_cores_busy": round(cpu_s / busy_s, 2),
            "written_mb": round((_write_bytes(pid) - writes_before) / 2**20, 3),
            "slowest_episode_s": round(max(episode_s.values()), 2),
            "episode_s": {k: round(v, 2) for k, v in episode_s.items()},
            "concurrent_hard_sessions": sessions,
            "slowest_concurrent_episode_s": round(max(concurrent_s), 2),
            "episodes_per_task": episodes,
        }
    finally:
        server.terminate()
        server.wait(timeout=15)


def table_rows(r: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        ("  server start to healthy", f"{r['startup_s']:.1f} s"),
        ("  resident memory idle / peak", f"{r['idle_rss_mb']:.0f} MB / {r['peak_rss_mb']:.0f} MB"),
        ("  CPU cores used while serving", f"{r['cpu_cores_busy']:.2f}"),
        ("  bytes written to storage", f"{r['written_mb']:.3f} MB"),
        (
            "  slowest episode (alone / 1 of "
            f"{r['concurrent_hard_sessions']} hard sessions at once)",
            f"{r['slowest_episode_s']:.1f} s / {r['slowest_concurrent_episode_s']:.1f} s",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3, help="random episodes per task (>= 1)")
    parser.add_argument("--sessions", type=int, default=8, help="concurrent hard sessions (>= 1)")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args(argv)
    if args.episodes < 1 or args.sessions < 1:
        parser.error("--episodes and --sessions must be >= 1")
    result = run(args.episodes, args.sessions)
    if args.json:
        print(json.dumps(result))
    else:
        print("\n".join(f"{k.strip():<60} {v}" for k, v in table_rows(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
