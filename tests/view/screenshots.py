"""Screenshots of `fakegang view` for docs/viewer.md, taken with Debian's headless Chromium.

    python tests/view/screenshots.py --db DB [--out docs/img] [--step 6]

Starts the viewer over DB on a free 127.0.0.1 port and saves five PNGs: the episode list of the
newest training run (view-episodes.png), its first episode at action #`--step`
(view-episode.png), the campaign page (view-campaigns.png), the learning page (view-learning.png,
the whole page) and the debrief of the file's last hard episode (or of that first episode) with
its case picture and why these accounts (view-debrief.png). Not a test (pytest does not collect
it); the docs' pictures come from it.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))

from env_fixtures import free_port  # noqa: E402
from view_fixtures import FAKEGANG, wait_until_up  # noqa: E402

NAMES = ("view-episodes.png", "view-episode.png", "view-campaigns.png", "view-learning.png",
         "view-debrief.png")  # fmt: skip


def newest_training(db: Path) -> tuple[str, str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        for run_id, settings in conn.execute(
            "select run_id, settings from runs order by started_at desc, rowid desc"
        ):
            if json.loads(settings or "{}").get("kind", "train") == "train":
                thread = conn.execute(
                    "select thread_id from episodes where run_id = ? order by episode",
                    [run_id],
                ).fetchone()[0]
                return run_id, thread
    finally:
        conn.close()
    raise SystemExit(f"{db} holds no training run")


def last_hard_episode(db: Path) -> str | None:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        row = conn.execute(
            "select thread_id from episodes where task = 'hard' and status = 'finished' "
            "order by finished_at desc limit 1"
        ).fetchone()
    finally:
        conn.close()
    return row[0] if row else None


def _shrink(path: Path) -> None:
    """A 128-colour palette PNG: a third of the size, no visible loss on these flat pages."""
    from PIL import Image

    Image.open(path).convert("RGB").quantize(colors=128).save(path, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--out", default="docs/img")
    parser.add_argument("--step", type=int, default=6, help="action shown on the episode page")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    db, out = Path(args.db), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_id, thread = newest_training(db)
    port = free_port()
    proc = subprocess.Popen([*FAKEGANG, "view", "--db", str(db), "--port", str(port)])
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base + "/", proc)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            page.goto(f"{base}/runs/{run_id}")
            page.screenshot(path=str(out / "view-episodes.png"))
            page.goto(f"{base}/episode/{thread}#step={args.step}")
            page.wait_for_selector("body[data-ready='1']")
            page.screenshot(path=str(out / "view-episode.png"))
            page.goto(f"{base}/campaigns")
            page.screenshot(path=str(out / "view-campaigns.png"), full_page=False)
            page.goto(f"{base}/learning")
            page.screenshot(path=str(out / "view-learning.png"), full_page=True)
            page.goto(f"{base}/episode/{last_hard_episode(db) or thread}")
            page.wait_for_selector("body[data-ready='1']")
            page.keyboard.press("End")
            page.wait_for_selector("#debrief")
            page.screenshot(path=str(out / "view-debrief.png"))
            browser.close()
        for name in NAMES:
            _shrink(out / name)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"wrote {', '.join(str(out / n) for n in NAMES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
