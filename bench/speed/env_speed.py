"""Speed of the environment: generation, in-process steps, HTTP and WebSocket steps, payload size.

    python bench/speed/env_speed.py [--seeds 3] [--json]

* hard network generation: median wall time of `generate_network("hard", seed)`;
* in-process: `Episode.step` calls per second over full hard episodes (the `naive` policy's
  recorded actions, replayed; construction excluded);
* HTTP: the real server (`python -m fakegang_env.server.app`) on a free 127.0.0.1 port, driven
  by one keep-alive httpx client replaying the same full hard episodes with `action_index`;
  `POST /step` requests per second (reset excluded) and whole-episode wall time (reset included);
* WebSocket: the same episodes with OpenEnv's client (`FakeGangEnv(...).sync()`);
* hard observation size: bytes of the `/step` response JSON at reset and at the last step;
* pivots: median and max wall time of one in-process `pivot` step on hard (every trace from the
  reported member, then from every other member, on `mixed` networks; target < 5 ms), and of
  the trace pass alone (`build_traces`, part of the generation time above).

The server and the client share this machine's cores, so the HTTP and WS numbers include both
sides' CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.speed.timing import aligned, lap, median  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402
from fakegang_env.generator import generate_network  # noqa: E402
from fakegang_env.policies import make_policy  # noqa: E402
from fakegang_env.traces import TRACES, build_traces  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TASK = "hard"
Action = tuple[str, "str | None"]


def record_actions(seed: int) -> list[Action]:
    """The naive policy's full hard episode (it plays until the budget forces the end)."""
    ep = Episode(TASK, seed)
    policy = make_policy("naive", network=ep.network, seed=seed)
    obs = ep.observation()
    actions: list[Action] = []
    while not ep.done:
        action = policy.act(obs)
        obs = ep.step(*action)
        actions.append(action)
    return actions


def bench_generation(seeds: list[int]) -> dict[str, float]:
    times: list[float] = []
    for seed in seeds:
        with lap(times):
            generate_network(TASK, seed)
    return {"median_s": median(times), "max_s": max(times)}


def bench_in_process(episodes: dict[int, list[Action]]) -> dict[str, float]:
    steps, laps = 0, []
    for seed, actions in episodes.items():
        ep = Episode(TASK, seed)
        with lap(laps):
            for action in actions:
                ep.step(*action)
        steps += len(actions)
    return {"steps": steps, "steps_per_s": steps / sum(laps)}


def bench_pivots(seeds: list[int]) -> dict[str, float]:
    """One pivot step, timed in-process, for every (member, trace) a budget allows."""
    pivots, passes, cpu = [], [], []  # wall and CPU time (a loaded machine inflates wall)
    for seed in seeds:
        ep = Episode(TASK, seed, tactics="mixed")
        net = ep.network
        pool = {net.accounts[g].ip_cluster_id for g in net.gang_ids}
        with lap(passes):
            build_traces(net, ep.playbook, pool)
        done: set[str] = set()
        while ep.steps_remaining >= 4:
            visible = set(ep.observation()["visible_account_ids"])
            todo = [g for g in [net.reported_id, *net.gang_ids] if g in visible - done]
            if not todo:
                break
            member = todo[0]
            done.add(member)
            ep.step("inspect", member)
            for trace in TRACES:
                if ep.steps_remaining < 3:
                    break
                c0 = time.process_time()
                with lap(pivots):
                    obs = ep.step("pivot", member, trace)
                cpu.append(time.process_time() - c0)
                assert obs["last_action_error"] is None, obs["last_action_error"]
    return {
        "pivots": len(pivots),
        "median_s": median(pivots),
        "max_s": max(pivots),
        "cpu_median_s": median(cpu),
        "cpu_max_s": max(cpu),
        "trace_pass_median_s": median(passes),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A fresh server process on `port` (with `env` instead of this one's), once healthy."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fakegang_env.server.app",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.25)
    proc.terminate()
    raise TimeoutError("server did not become healthy in 180 s")


def stop_process(proc: subprocess.Popen, timeout: float) -> None:
    """Terminate `proc`, and kill it if it has not exited within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def process_cpu_s(pid: int) -> float | None:
    """User+system CPU seconds of another process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_http(base_url: str, episodes: dict[int, list[Action]], server_pid: int) -> dict[str, Any]:
    """Steps/s plus CPU per step on each side (CPU time is far less sensitive than wall time to
    other processes competing for the cores)."""
    steps, step_laps, episode_times = 0, [], []
    server_cpu, client_cpu = 0.0, 0.0
    sizes: dict[str, int] = {}
    with httpx.Client(base_url=base_url, timeout=60.0) as http:
        http.get("/health")  # open the keep-alive connection
        for seed, actions in episodes.items():
            with lap(episode_times):
                r = http.post("/reset", json={"task": TASK, "seed": seed})
                r.raise_for_status()
                sizes.setdefault("reset_bytes", len(r.content))
                eid = r.json()["observation"]["episode_id"]
                index = 0
                cpu0, ccpu0 = process_cpu_s(server_pid), time.process_time()
                with lap(step_laps):
                    for kind, account_id in actions:
                        body = {
                            "action": {"action_type": kind, "account_id": account_id},
                            "episode_id": eid,
                            "action_index": index,
                        }
                        r = http.post("/step", json=body)
                        if r.status_code != 200:
                            raise RuntimeError(f"step failed: {r.status_code} {r.text[:200]}")
                        index = r.json()["observation"]["action_count"]
                client_cpu += time.process_time() - ccpu0
                cpu1 = process_cpu_s(server_pid)
                both = cpu0 is not None and cpu1 is not None
                server_cpu += (cpu1 - cpu0) if both else float("nan")
            steps += len(actions)
            sizes["final_bytes"] = max(sizes.get("final_bytes", 0), len(r.content))
    return {
        "steps": steps,
        "steps_per_s": steps / sum(step_laps),
        "episode_s_median": median(episode_times),
        "server_cpu_ms_per_step": server_cpu / steps * 1000,
        "client_cpu_ms_per_step": client_cpu / steps * 1000,
        **sizes,
    }


def bench_ws(base_url: str, episodes: dict[int, list[Action]]) -> dict[str, Any]:
    from fakegang_env.client import FakeGangEnv
    from fakegang_env.models import FakeGangAction

    steps, laps = 0, []
    with FakeGangEnv(base_url=base_url).sync() as env:
        for seed, actions in episodes.items():
            env.reset(task=TASK, seed=seed)
            with lap(laps):
                for kind, account_id in actions:
                    env.step(FakeGangAction(action_type=kind, account_id=account_id))
            steps += len(actions)
    return {"steps": steps, "steps_per_s": steps / sum(laps)}


def run(n_seeds: int) -> dict[str, Any]:
    seeds = list(range(n_seeds))
    result: dict[str, Any] = {"task": TASK, "seeds": n_seeds}
    result["generation"] = bench_generation(list(range(max(5, n_seeds))))
    episodes = {seed: record_actions(seed) for seed in seeds}
    result["in_process"] = bench_in_process(episodes)
    result["pivot"] = bench_pivots(list(range(max(5, n_seeds))))
    port = free_port()
    proc = start_server(port)
    try:
        base_url = f"http://127.0.0.1:{port}"
        result["http"] = bench_http(base_url, episodes, proc.pid)
        result["ws"] = bench_ws(base_url, episodes)
    finally:
        stop_process(proc, timeout=15)
    return result


def table(r: dict[str, Any]) -> str:
    h = r["http"]
    rows = [
        (
            "hard network generation, median",
            f"{r['generation']['median_s'] * 1000:.0f} ms",
            f"max {r['generation']['max_s'] * 1000:.0f} ms",
        ),
        (
            "in-process steps/s (full hard episodes)",
            f"{r['in_process']['steps_per_s']:.0f}",
            f"{r['in_process']['steps']} steps",
        ),
        (
            "HTTP steps/s (keep-alive httpx, loopback)",
            f"{h['steps_per_s']:.0f}",
            f"{h['steps']} steps",
        ),
        (
            "HTTP CPU per step: server / client",
            f"{h['server_cpu_ms_per_step']:.2f} / {h['client_cpu_ms_per_step']:.2f} ms",
            f"=> ~{1000 / (h['server_cpu_ms_per_step'] + h['client_cpu_ms_per_step']):.0f} "
            "steps/s if the two had the cores to themselves",
        ),
        (
            "HTTP full hard episode incl. reset, median",
            f"{h['episode_s_median']:.2f} s",
            f"{h['steps'] // r['seeds']} steps/episode",
        ),
        (
            "WebSocket steps/s (FakeGangEnv .sync())",
            f"{r['ws']['steps_per_s']:.0f}",
            f"{r['ws']['steps']} steps",
        ),
        (
            "hard pivot step in-process, median",
            f"{r['pivot']['median_s'] * 1000:.2f} ms",
            f"max {r['pivot']['max_s'] * 1000:.2f} ms over {r['pivot']['pivots']} pivots "
            f"(target < 5 ms); CPU median {r['pivot']['cpu_median_s'] * 1000:.2f}, max "
            f"{r['pivot']['cpu_max_s'] * 1000:.2f} ms",
        ),
        (
            "hard trace pass (in the generation), median",
            f"{r['pivot']['trace_pass_median_s'] * 1000:.1f} ms",
            "",
        ),
        ("hard observation JSON, at reset", f"{h['reset_bytes'] / 1024:.1f} KiB", ""),
        ("hard observation JSON, last step", f"{h['final_bytes'] / 1024:.1f} KiB", ""),
    ]
    lines = [
        f"env speed ({r['seeds']} hard episodes, naive policy's actions; "
        f"{os.cpu_count()} cores shared by client and server)"
    ]
    lines += aligned(rows, value_width=15)
    lines.append(f"(load average at the end: {os.getloadavg()[0]:.1f})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="hard episodes to replay (>= 1)")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be >= 1")
    result = run(args.seeds)
    print(json.dumps(result) if args.json else table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
