"""Load: many hard episodes at once over HTTP against one server process.

    python bench/speed/env_load.py [--episodes 64] [--json]

Each episode replays the `naive` policy's recorded hard actions (seeds 0..N-1) as its own
asyncio task over one shared `httpx.AsyncClient` (a pool of N keep-alive connections), with
`action_index` as the agent sends it. Reported: requests per second over the whole run, the
latency of every request (reset and steps) at p50 / p99 / max, and errors: any answer other than
200, any transport error, and any episode whose final reward differs from the same actions
played in-process (a mixed-up episode would show here). Errors must be 0.

Client and server share this machine's cores (2 here, often busy with other work), so the
latencies include queueing on the client side as much as the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.* imports

from bench.speed import env_speed  # noqa: E402
from bench.speed.timing import lap  # noqa: E402
from fakegang_env.engine import Episode  # noqa: E402

TASK = "hard"
Action = tuple[str, "str | None"]


def expected_final_reward(seed: int, actions: list[Action]) -> float | None:
    episode = Episode(TASK, seed)
    obs = episode.observation()
    for action in actions:
        obs = episode.step(*action)
    return obs.get("reward")


async def _play(
    http: httpx.AsyncClient, seed: int, actions: list[Action], latencies: list[float]
) -> tuple[list[str], float | None]:
    """One episode; returns (errors, final reward)."""
    errors: list[str] = []
    reset = {"task": TASK, "seed": seed, "episode_id": f"load-{seed}"}
    with lap(latencies):
        r = await http.post("/reset", json=reset)
    if r.status_code != 200:
        return [f"seed {seed} reset: HTTP {r.status_code} {r.text[:120]}"], None
    reward = None
    for index, (kind, account_id) in enumerate(actions):
        action: dict[str, Any] = {"action_type": kind}
        if account_id is not None:
            action["account_id"] = account_id
        body = {"action": action, "episode_id": f"load-{seed}", "action_index": index}
        try:
            with lap(latencies):
                r = await http.post("/step", json=body)
        except httpx.HTTPError as exc:
            errors.append(f"seed {seed} step {index}: {type(exc).__name__}")
            break
        if r.status_code != 200:
            errors.append(f"seed {seed} step {index}: HTTP {r.status_code} {r.text[:120]}")
            break
        reward = r.json()["reward"]
    return errors, reward


async def _run(base_url: str, episodes: dict[int, list[Action]], token: str | None) -> dict:
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=len(episodes), max_keepalive_connections=len(episodes))
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx.AsyncClient(
        base_url=base_url, timeout=120.0, limits=limits, headers=headers
    ) as http:
        await http.get("/health")
        walls: list[float] = []
        with lap(walls):
            outcomes = await asyncio.gather(
                *(_play(http, seed, actions, latencies) for seed, actions in episodes.items()),
                return_exceptions=True,
            )
    errors: list[str] = []
    finals: dict[int, float | None] = {}
    for seed, outcome in zip(episodes, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            errors.append(f"seed {seed}: {type(outcome).__name__}: {outcome}"[:200])
            continue
        errs, reward = outcome
        errors += errs
        finals[seed] = reward
    return {"latencies": latencies, "wall_s": walls[0], "errors": errors, "finals": finals}


def bench_load(base_url: str, n_episodes: int = 64, token: str | None = None) -> dict[str, Any]:
    """Play `n_episodes` hard episodes at once against `base_url`; see the module docstring."""
    episodes = {seed: env_speed.record_actions(seed) for seed in range(n_episodes)}
    run = asyncio.run(_run(base_url, episodes, token))
    errors = list(run["errors"])
    for seed, reward in run["finals"].items():
        expected = expected_final_reward(seed, episodes[seed])
        if reward != expected:
            errors.append(f"seed {seed}: final reward {reward} != in-process {expected}")
    lat = sorted(run["latencies"])
    q = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else lat * 99
    return {
        "episodes": n_episodes,
        "requests": len(lat),
        "wall_s": round(run["wall_s"], 2),
        "requests_per_s": round(len(lat) / run["wall_s"], 1),
        "p50_ms": round(q[49] * 1000, 1),
        "p99_ms": round(q[98] * 1000, 1),
        "max_ms": round(lat[-1] * 1000, 1),
        "errors": len(errors),
        "error_samples": errors[:5],
        "load_average": round(os.getloadavg()[0], 1),
    }


def table(r: dict[str, Any]) -> str:
    return (
        f"{r['episodes']} concurrent hard episodes over HTTP: {r['requests']} requests in "
        f"{r['wall_s']} s = {r['requests_per_s']} req/s; latency p50 {r['p50_ms']} ms, "
        f"p99 {r['p99_ms']} ms, max {r['max_ms']} ms; errors {r['errors']} "
        f"(load average {r['load_average']}, client and server on {os.cpu_count()} shared cores)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64, help="concurrent episodes (>= 1)")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be >= 1")
    port = env_speed.free_port()
    proc = env_speed.start_server(port)
    try:
        result = bench_load(f"http://127.0.0.1:{port}", args.episodes)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    print(json.dumps(result) if args.json else table(result))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())


def table_rows(load: dict) -> list[tuple[str, str]]:
    """The LOAD section of `make bench`'s table."""
    return [
        (
            "  requests/s",
            f"{load['requests_per_s']}  ({load['requests']} requests in {load['wall_s']} s)",
        ),
        (
            "  latency p50 / p99 / max",
            f"{load['p50_ms']} / {load['p99_ms']} / {load['max_ms']} ms  (client and server "
            "share the cores)",
        ),
        (
            "  errors (must be 0)",
            f"{load['errors']}" + (f"  e.g. {load['error_samples'][0]}" if load["errors"] else ""),
        ),
    ]
