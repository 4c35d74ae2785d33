"""The learning page after a `make run`-shaped training, in Chromium (slow: a 50-episode run).

`make run` plays the 50-episode easy→medium→hard curriculum; its database holds 50 weight
versions, 50 credit rows and hundreds of trace-yield rows. The page must still say in words what
did and did not move, keep the long tables folded, and fit a laptop window: under three window
heights and no wider than the window. The run here is `fakegang train --model fake` with its
defaults, which is what `make run` plays (train.py) with the stand-in model.
"""

from __future__ import annotations

import pytest
from test_view_browser import CHROMIUM, Watch, sync_api
from view_fixtures import run_cli, serving_viewer

from fakegang.view.db import read_only
from fakegang.view.learning import MOVED, memory_data

pytestmark = pytest.mark.slow
WINDOW = {"width": 1400, "height": 900}


@pytest.fixture(scope="module")
def make_run_db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("make-run")
    db = tmp / "fakegang.sqlite"
    run_cli("train", "--model", "fake", "--db", str(db), "--log-dir", str(tmp / "logs"),
            timeout=1800)  # fmt: skip
    return db


@pytest.fixture(scope="module")
def make_run_viewer(make_run_db):
    with serving_viewer(make_run_db) as url:
        yield url


def test_learning_page_after_make_run_says_what_moved_and_fits_the_window(
    make_run_db, make_run_viewer
):
    with read_only(make_run_db) as conn:
        memory = memory_data(conn)
    assert len(memory["versions"]) == 50
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport=WINDOW)
        watch = Watch(make_run_viewer)
        context.route("**/*", watch.route)
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and watch.errors.append(m.text))
        page.on("pageerror", lambda e: watch.errors.append(str(e)))
        page.goto(make_run_viewer + "/learning")
        section = page.locator("section.memory", has_text="this file's memory")
        summary = section.locator(".moved-summary").inner_text()
        moved = [f for f, d in memory["farthest"].items() if d >= MOVED]
        if moved:
            assert all(f in summary for f in moved)
            assert section.locator("svg.chart polyline").count() == len(moved)
        else:  # said in words, with no chart of 50 flat lines
            assert "50 refits, no weight moved" in summary
            assert section.locator("svg.chart").count() == 0
        # every version is there, folded
        assert section.locator("details.versions table tbody tr").count() == 50
        assert not section.locator("details.versions").get_attribute("open")
        height, width = page.evaluate(
            "[document.documentElement.scrollHeight, document.documentElement.scrollWidth]"
        )
        assert height < 3 * WINDOW["height"], height
        assert width <= WINDOW["width"], width
        context.close()
        browser.close()
    assert watch.errors == [] and watch.foreign == []
