"""`fakegang view` in a real browser: Debian's headless Chromium driven by Playwright.

The viewer serves a database that a short real training and a tiny campaign wrote
(tests/view/conftest.py). Each page is checked against the database read another way: the
episode list against the `episodes` table, the step view against the checkpoints as
`fakegang replay` reads them, the case picture against observe's own counts, the debrief against
the final observation the agent stored. Every test fails on a console error and on any request
to a host other than the viewer's (all requests are intercepted; others are aborted).

Skipped, with the reason, only where Chromium or Playwright is not installed (`make setup`
installs both).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)
if not Path(CHROMIUM).exists():
    pytest.skip(
        "Debian's chromium is not installed (make setup: apt-get install -y chromium)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Watch:
    """Console errors, page errors and requests of one page."""

    def __init__(self, base: str):
        self.origin = urlsplit(base).netloc
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.foreign: list[str] = []

    def route(self, route):
        url = route.request.url
        self.requests.append(url)
        if urlsplit(url).scheme in ("data", "blob") or urlsplit(url).netloc == self.origin:
            route.continue_()
        else:
            self.foreign.append(url)
            route.abort()


@pytest.fixture
def page(browser, viewer):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    watch = Watch(viewer)
    context.route("**/*", watch.route)
    pg = context.new_page()
    pg.on("console", lambda m: m.type == "error" and watch.errors.append(m.text))
    pg.on("pageerror", lambda e: watch.errors.append(str(e)))
    pg.watch = watch
    yield pg
    context.close()
    assert watch.errors == [], f"console errors: {watch.errors}"
    assert watch.foreign == [], f"requests left the machine: {watch.foreign}"
    assert watch.requests, "no request was seen: the interception did not run"


def _rows(db: Path, sql: str, args=()) -> list[dict]:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


def _reference_steps(db: Path, thread_id: str, tmp_path: Path) -> list[dict]:
    """Per action the node outputs as `fakegang replay` reads them (on a copy of the file)."""
    from fakegang.graph.graph import compile_with_sqlite
    from fakegang.runs.replay import group_by_action, head_branch, node_records

    copy = tmp_path / "copy.sqlite"
    src = sqlite3.connect(str(db))
    dst = sqlite3.connect(str(copy))
    src.backup(dst)
    src.close()
    dst.close()
    app = compile_with_sqlite(copy)
    try:
        chain, _ = head_branch(app, thread_id)
        groups = group_by_action(node_records(chain))
    finally:
        app.checkpointer.conn.close()
    out = []
    for g in groups:
        if g[0].node != "observe":
            continue
        by = {r.node: r.values for r in g}
        out.append(
            {
                "view": by["observe"]["view"],
                "rule": by["rule_check"]["rule"],
                "llm": by["llm_decide"]["llm"],
                "decision": by["arbitrate"]["decision"],
                "alpha": by["arbitrate"]["alpha"],
                "last": by["step_env"]["last"],
            }
        )
    return out


def _open_episode(page, viewer: str, thread_id: str) -> None:
    page.goto(f"{viewer}/episode/{thread_id}")
    page.wait_for_selector("body[data-ready='1']")


def _field(page, name: str) -> str:
    return page.inner_text(f"[data-field='{name}']")


def test_episode_list_shows_the_episodes_in_the_file(page, viewer, view_db):
    page.goto(viewer + "/")
    page.click(f"a[href='/runs/{view_db.train_run}']")
    page.wait_for_selector("table#episodes")
    shown = page.eval_on_selector_all(
        "table#episodes tbody tr", "rows => rows.map(r => r.dataset.thread)"
    )
    expected = _rows(
        view_db.path, "select thread_id from episodes where run_id = ? order by episode",
        [view_db.train_run],
    )  # fmt: skip
    assert shown == [r["thread_id"] for r in expected]
    assert len(shown) == 3
    # the outcome filter narrows the list to what the table says
    page.select_option("select[name='outcome']", "lost")
    page.click("form.filters button")
    page.wait_for_selector("table#episodes")
    lost = page.eval_on_selector_all("table#episodes tbody tr", "rows => rows.length")
    n_lost = _rows(
        view_db.path,
        "select count(*) n from episodes where run_id = ? and won = 0",
        [view_db.train_run],
    )[0]["n"]
    assert lost == n_lost


def _first_training_thread(view_db) -> str:
    """The thread of the training run's first episode."""
    return _rows(
        view_db.path, "select thread_id from episodes where run_id = ? order by episode limit 1",
        [view_db.train_run],
    )[0]["thread_id"]  # fmt: skip


def test_stepping_forward_shows_each_steps_node_outputs(page, viewer, view_db, tmp_path):
    thread = _first_training_thread(view_db)
    reference = _reference_steps(view_db.path, thread, tmp_path)
    assert len(reference) > 5
    _open_episode(page, viewer, thread)
    seen_actions = []
    for k, ref in enumerate(reference[:6]):
        if k:  # alternate the arrow key and the button
            if k % 2:
                page.keyboard.press("ArrowRight")
            else:
                page.click("#next")
        assert page.get_attribute("#stepper", "data-step") == str(k)
        assert page.inner_text("#step-counter").startswith(f"action {k + 1} of {len(reference)}")
        assert _field(page, "action") == ref["decision"]["action"]
        assert _field(page, "mode") == ref["decision"]["mode"]
        assert _field(page, "alpha") == f"{ref['alpha']:.2f}"
        assert _field(page, "rule-action") == ref["rule"]["action"]
        assert _field(page, "rule-confidence") == f"{ref['rule']['confidence']:.2f}"
        asked = ref["llm"]["status"] != "skipped"
        assert _field(page, "llm-asked") == ("yes" if asked else "no")
        if asked:
            assert _field(page, "llm-action") == (ref["llm"]["action"] or "–")
        assert _field(page, "message") == ref["last"]["message"]
        assert _field(page, "reward") == f"{ref['last']['reward']:+.2f}"
        v = ref["view"]
        assert _field(page, "view-counts").startswith(f"{v['visible']} visible")
        seen_actions.append(_field(page, "action"))
    assert len(set(seen_actions)) > 1, "the shown step did not change"
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute("#stepper", "data-step") == "4"
    assert _field(page, "action") == reference[4]["decision"]["action"]


def test_case_picture_is_drawn_and_follows_the_steps(page, viewer, view_db, tmp_path):
    thread = _first_training_thread(view_db)
    reference = _reference_steps(view_db.path, thread, tmp_path)
    _open_episode(page, viewer, thread)
    assert page.locator("#case-graph canvas").count() > 0
    for k in range(4):
        if k:
            page.keyboard.press("ArrowRight")
        drawn = page.evaluate("window.fakegangView.cy.nodes(':visible').length")
        assert drawn > 0
        # after action k the case holds what observe saw before action k + 1
        assert drawn == reference[k + 1]["view"]["visible"]
        assert int(page.get_attribute("#case-graph", "data-visible-nodes")) == drawn
        assert page.locator("#case-counts").inner_text().startswith(f"{drawn} seen")
    # the canvas is not blank: some pixels differ from the background
    shot = page.locator("#case-graph").screenshot()
    from io import BytesIO

    from PIL import Image

    colours = Image.open(BytesIO(shot)).convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 10


def test_last_step_shows_the_debrief(page, viewer, view_db):
    for ep in _rows(
        view_db.path, "select thread_id, won from episodes where run_id = ? order by episode",
        [view_db.train_run],
    ):  # fmt: skip
        final = json.loads(
            _rows(
                view_db.path,
                "select observation from observations where thread_id = ?",
                [ep["thread_id"]],
            )[0]["observation"]
        )
        ring, flagged = set(final["ring_ids"]), set(final["flagged_ids"])
        _open_episode(page, viewer, ep["thread_id"])
        page.keyboard.press("End")
        page.wait_for_selector("#debrief")
        assert page.inner_text("#step-counter") == "end · debrief"
        assert page.inner_text("#debrief h2") == f"Debrief: {'WIN' if ep['won'] else 'LOSS'}"
        assert set(_field(page, "debrief-ring").split()) == ring
        assert set(_field(page, "debrief-hits").split()) - {"–"} == ring & flagged
        assert set(_field(page, "debrief-misses").split()) - {"–"} == ring - flagged
        assert set(_field(page, "debrief-false").split()) - {"–"} == flagged - ring
        hits = page.evaluate("window.fakegangView.cy.nodes('.hit').length")
        assert hits == len(ring & flagged)


def test_campaign_point_opens_its_episode(page, viewer, view_db):
    rounds = _rows(
        view_db.path, "select thread_id, episode from episodes where run_id = ? order by episode",
        [view_db.campaign_run],
    )  # fmt: skip
    assert len(rounds) == 3
    page.goto(viewer + "/campaigns")
    links = page.locator("svg.chart a.point-link")
    assert links.count() == 3
    hrefs = [links.nth(i).get_attribute("href") for i in range(3)]
    assert hrefs == [f"/episode/{r['thread_id']}" for r in rounds]
    links.nth(1).click()
    page.wait_for_selector("body[data-ready='1']")
    assert page.url.split("#")[0] == f"{viewer}/episode/{rounds[1]['thread_id']}"
    assert page.inner_text("h1").startswith(f"Episode {rounds[1]['episode']}")
    n_steps = _rows(
        view_db.path, "select count(*) n from steps where thread_id = ?", [rounds[1]["thread_id"]]
    )[0]["n"]
    assert page.inner_text("#step-counter").startswith(f"action 1 of {n_steps}")


def test_learning_page_lists_what_was_learned(page, viewer, view_db):
    page.goto(viewer + "/learning")
    versions = _rows(view_db.path, "select version from weight_versions order by version")
    credit = _rows(view_db.path, "select thread_id from credit")
    assert versions and credit
    assert page.locator("table#versions tbody tr").count() == len(versions)
    assert page.locator("table#credit tbody tr").count() == len(credit)
    assert page.locator("svg.chart").count() >= 1
