"""How fast `fakegang view` opens a long episode: server time and time to a drawn page.

    python bench/speed/view_speed.py [--actions 240] [--repeats 5] [--db PATH] [--json]

The episode is real in every part but its decisions: a hard episode played through the real
graph (SQLite checkpoints, the embedded environment server, memory writes, `--model fake`)
with the rule engine's proposal replaced by a script that packs the most actions the budget
allows into it: per step, flag an account, unflag it, inspect the next one (3 actions per step,
the agent's cap: 80 steps, 240 actions). Its confidence alternates so the LLM is asked on some
steps. The page then has what a long real episode has: ~1,200 node checkpoints, 240 steps and
their case.

Measured, median of `--repeats`:
* server: GET /episode/<thread> (checkpoints read, case rebuilt, HTML + JSON rendered), through
  uvicorn on 127.0.0.1;
* browser: headless Chromium (Debian's, driven by Playwright) from navigation start to the page
  ready (JSON parsed, Cytoscape laid out and drew the whole case, first step shown);
* stepping: mean time of one arrow-key step over all the episode's steps (Playwright's key-press
  round trip included);
* the jump to the end (Home, then End, median): the debrief with the whole case drawn.
The page opens at the first action, showing the accounts seen by then; the case's elements are
added to the picture as steps reveal them, so the jump to the end is where all of them are
drawn. The target is the open figure: under 1 s.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the checkout: bench.* imports

from bench.speed.timing import aligned, lap, median  # noqa: E402


def _scripted_propose(actions_per_step: int):
    """A stand-in for tools/rules/engine.py `propose`: flag, unflag, inspect, round and round."""
    from fakegang.tools.rules.engine import Proposal

    def propose(obs, starting_ids, scores=None, **_):
        flagged = list(obs.flagged_ids)
        inspected = set(obs.inspected_ids)
        fresh = [a for a in obs.visible_account_ids if a not in inspected]
        phase = obs.action_count % actions_per_step
        if flagged:
            action = f"unflag {flagged[0]}"
        elif phase == 0 and obs.visible_account_ids:
            action = f"flag {obs.visible_account_ids[-1]}"
        elif fresh:
            action = f"inspect {fresh[0]}"
        else:
            action = f"inspect {obs.visible_account_ids[0]}"
        confidence = 0.9 if obs.action_count % 4 else 0.1  # the LLM is asked on a quarter
        choices = sorted({action, "submit"} | {f"inspect {a}" for a in fresh[:3]})
        return Proposal(action, confidence, "scripted for the speed bench", choices)

    return propose


def long_episode_db(path: Path, actions: int) -> str:
    """Play the long hard episode into `path`; its thread id."""
    from fakegang.graph.context import Context
    from fakegang.runs.runner import TrainOptions, train

    # the module, not the node function the package re-exports under the same name
    rule_check = importlib.import_module("fakegang.graph.nodes.rule_check")
    real = rule_check.propose
    rule_check.propose = _scripted_propose(3)
    try:
        opts = TrainOptions(
            context=Context(model="fake", db_path=str(path)),
            task="hard",
            episodes=1,
            log_dir=str(path.parent),
        )
        train(opts, out=io.StringIO())
    finally:
        rule_check.propose = real
        from fakegang.graph import resources

        resources.reset_all()
    conn = sqlite3.connect(str(path))
    try:
        thread, n = conn.execute(
            "select e.thread_id, count(s.idx) from episodes e join steps s using (thread_id) "
            "group by e.thread_id"
        ).fetchone()
    finally:
        conn.close()
    if n < actions:
        print(f"note: the episode has {n} actions (asked for {actions})", file=sys.stderr)
    return thread


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(db: Path, thread: str, repeats: int) -> dict:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakegang.cli.main", "view", "--db", str(db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                if httpx.get(base + "/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        url = f"{base}/episode/{thread}"
        server: list[float] = []
        size = 0
        httpx.get(url, timeout=30)  # warm-up: imports, first compile of the graph
        for _ in range(repeats):
            with lap(server):
                r = httpx.get(url, timeout=30)
            size = len(r.content)
        data = httpx.get(f"{base}/api/episode/{thread}", timeout=30).json()
        out = {
            "actions": len(data["steps"]),
            "checkpoints": data["checkpoints"],
            "accounts": len(data["case"]["accounts"]),
            "page_kb": round(size / 1024),
            "server_s": median(server),
        }
        out.update(_browser(url, repeats, out["actions"]))
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _browser(url: str, repeats: int, actions: int) -> dict:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"browser_s": None, "step_ms": None, "end_jump_s": None, "note": "no playwright"}
    if not Path(chromium).exists():
        return {"browser_s": None, "step_ms": None, "end_jump_s": None, "note": "no chromium"}
    loads: list[float] = []
    jumps: list[float] = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)  # warm-up: the browser's own start
        page.wait_for_selector("body[data-ready='1']")
        for _ in range(repeats):
            page.goto("about:blank")
            with lap(loads):
                page.goto(url)
                page.wait_for_selector("body[data-ready='1']")
        stepping: list[float] = []
        with lap(stepping):
            for _ in range(actions):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(f"window.fakegangView.position() === {actions}")
        step_ms = stepping[0] / actions * 1000
        for _ in range(repeats):  # Home then End: the whole case built from nothing
            page.keyboard.press("Home")
            page.wait_for_function("window.fakegangView.position() === 0")
            with lap(jumps):
                page.keyboard.press("End")
                page.wait_for_function(f"window.fakegangView.position() === {actions}")
        b.close()
    return {
        "browser_s": median(loads),
        "step_ms": step_ms,
        "end_jump_s": median(jumps),
    }


def table(r: dict) -> str:
    def s(v, fmt):
        return "n/a" if v is None else format(v, fmt)

    rows = [
        ("actions in the episode", str(r["actions"])),
        ("checkpoints on its head branch", str(r["checkpoints"])),
        ("accounts in the case", str(r["accounts"])),
        ("episode page size", f"{r['page_kb']} KiB"),
        ("server: GET /episode (median)", f"{s(r['server_s'], '.3f')} s"),
        ("browser: open to drawn (median)", f"{s(r['browser_s'], '.3f')} s  (target < 1 s)"),
        ("browser: one arrow-key step", f"{s(r['step_ms'], '.1f')} ms"),
        ("browser: jump to the end (whole case)", f"{s(r['end_jump_s'], '.3f')} s"),
    ]
    width = max(len(k) for k, _ in rows)
    lines = ["fakegang view: a long hard episode", "-" * (width + 24)]
    lines += aligned(rows)
    if r.get("load") is not None:
        lines.append(f"load average {r['load']} on {os.cpu_count()} cores while measuring")
    if r.get("note"):
        lines.append(f"note: {r['note']}")
    return "\n".join(lines)


def run(repeats: int = 5, actions: int = 240, db: Path | None = None) -> dict:
    """The measurements with their table (the section `bench/suite/run_all.py` records)."""
    tmp = Path(tempfile.mkdtemp(prefix="fakegang-view-bench-"))
    try:
        path = db or tmp / "long.sqlite"
        thread = long_episode_db(path, actions)
        result = measure(path, thread, repeats)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["load"] = round(os.getloadavg()[0], 1)
    result["table"] = table(result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--db", help="keep the long episode's database here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.repeats, args.actions, Path(args.db) if args.db else None)
    print(json.dumps(result) if args.json else result["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
