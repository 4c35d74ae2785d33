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

#: A real browser and a trained database: behind the `slow` marker (CI runs it, `make test-slow`).
pytestmark = pytest.mark.slow

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
    from fakegang.runs.replay import group_by_action, head_branch, is_action, node_records

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
        if not is_action(g):
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


def _open_hard_debrief(page, viewer: str, view_db) -> str:
    """Open the fixture's hard episode at its last action (the debrief); its thread id."""
    thread = _rows(
        view_db.path, "select thread_id from episodes where run_id = ?", [view_db.hard_run]
    )[0]["thread_id"]
    _open_episode(page, viewer, thread)
    page.keyboard.press("End")
    page.wait_for_selector("#debrief")
    return thread


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
        assert page.inner_text("#step-counter").startswith(f"action #{k} · ")
        assert f"({len(reference)} actions: #0–#{len(reference) - 1})" in page.inner_text(
            "#step-counter"
        )
        assert _field(page, "action") == ref["decision"]["action"]
        assert page.get_attribute("[data-field='mode']", "data-mode") == ref["decision"]["mode"]
        asked = ref["llm"]["status"] != "skipped"
        if not asked:  # not asked, the LLM cannot be overridden: the rule decided alone
            assert ref["decision"]["mode"] == "rule_alone"
            assert _field(page, "mode") == "rule_alone: the rule's choice (the LLM was not asked)"
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


COUNT_DRAWN = """() => {
  const cy = window.fakegangView.cy;
  const crowd = cy.nodes('.crowd').map(n => parseInt(n.data('label').slice(1), 10));
  return cy.nodes(':visible').not('.crowd').length + crowd.reduce((a, b) => a + b, 0);
}"""


def test_case_picture_is_drawn_and_follows_the_steps(page, viewer, view_db, tmp_path):
    thread = _first_training_thread(view_db)
    reference = _reference_steps(view_db.path, thread, tmp_path)
    _open_episode(page, viewer, thread)
    assert page.locator("#case-graph canvas").count() > 0
    for k in range(4):
        if k:
            page.keyboard.press("ArrowRight")
        # accounts drawn alone plus the members of the counted crowds drawn
        drawn = page.evaluate(COUNT_DRAWN)
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
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    n_static = len(
        _rows(view_db.path, "select 1 from episodes where run_id = ?", [view_db.static_run])
    )
    assert n_static == 3
    assert len(hrefs) == 3 * 3  # learning, prior and static (the oracle plays no episode)
    mine = [f"/episode/{r['thread_id']}" for r in rounds]
    assert [h for h in hrefs if h in mine] == mine
    # the learning and prior lines can share a point: the link itself is clicked, not its spot
    page.locator(f"svg.chart a.point-link[href='{mine[1]}']").dispatch_event("click")
    page.wait_for_selector("body[data-ready='1']")
    assert page.url.split("#")[0] == f"{viewer}/episode/{rounds[1]['thread_id']}"
    assert page.inner_text("h1").startswith(f"Episode {rounds[1]['episode']}")
    n_steps = _rows(
        view_db.path, "select count(*) n from steps where thread_id = ?", [rounds[1]["thread_id"]]
    )[0]["n"]
    assert page.inner_text("#step-counter").startswith("action #0 · ")
    assert f"({n_steps} actions: #0–#{n_steps - 1})" in page.inner_text("#step-counter")


def _side_file(view_db) -> Path:
    """The learning campaign's own memory, beside the database."""
    from fakegang.view.memories import side_file

    settings = json.loads(
        _rows(view_db.path, "select settings from runs where run_id = ?", [view_db.campaign_run])[
            0
        ]["settings"]
    )
    return side_file(view_db.path, settings)


def test_learning_page_shows_what_moved_in_the_campaign_and_fits_the_window(page, viewer, view_db):
    from fakegang.view.db import read_only
    from fakegang.view.learning import MOVED, memory_data

    side = _side_file(view_db)
    assert side.is_file()
    with read_only(side) as conn:
        memory = memory_data(conn, view_db.campaign_run)
    assert memory["versions"], "the learning campaign refit after its rounds"
    assert memory["insights"], "the learning campaign recorded insights"
    page.goto(viewer + "/learning")
    section = page.locator("section.memory", has_text="learning campaign 0")
    assert section.count() == 1
    # every weight version of the campaign's memory, and every insight, in words
    assert section.locator("table.versions tbody tr").count() == len(memory["versions"])
    assert section.locator("ul.insights li").count() == len(memory["insights"])
    summary = section.locator(".moved-summary").inner_text()
    moved = [f for f, d in memory["farthest"].items() if d >= MOVED]
    if moved:  # what moved is named; the chart draws only those families
        assert "refits moved the rule weights" in summary
        assert all(f in summary for f in moved)
        assert section.locator("svg.chart polyline").count() == len(moved)
    else:
        assert f"{len(memory['versions'])} refits, no weight moved" in summary
    # each round of the campaign, with the refit it caused
    assert section.locator("table.rounds tbody tr").count() == 3
    # learning against the fixed baseline, from the campaign's two modes
    base = page.locator("table#baseline tbody tr")
    assert base.count() == 1
    won = _rows(
        view_db.path, "select sum(won) n, count(*) r from episodes where run_id = ?",
        [view_db.campaign_run],
    )[0]  # fmt: skip
    assert f"{won['n']} of {won['r']}" in base.inner_text()
    # the trainings' memory in this file: what moved, or that nothing did, in words
    with read_only(view_db.path) as conn:
        own = memory_data(conn)
    own_section = page.locator("section.memory", has_text="this file's memory")
    own_summary = own_section.locator(".moved-summary").inner_text()
    own_moved = [f for f, d in own["farthest"].items() if d >= MOVED]
    if own_moved:
        assert all(f in own_summary for f in own_moved)
    else:
        assert f"{len(own['versions'])} refits, no weight moved" in own_summary
        assert own_section.locator("svg.chart").count() == 0
    # a laptop window: under three window heights, and no wider than the window
    height, width, inner = page.evaluate(
        "[document.documentElement.scrollHeight, document.documentElement.scrollWidth, "
        "window.innerWidth]"
    )
    assert height < 3 * 1000, height
    assert width <= inner, (width, inner)


def test_step_numbering_in_the_url_the_stepper_and_fork_name_the_same_action(
    page, viewer, view_db, tmp_path
):
    import re
    import shutil

    from playwright.sync_api import expect
    from view_fixtures import run_cli

    from fakegang.view.episode import load_episode

    thread = _first_training_thread(view_db)
    k = 4
    page.goto(f"{viewer}/episode/{thread}#step={k}")
    page.wait_for_selector("body[data-ready='1']")
    shown = _field(page, "action")
    assert page.get_attribute("#stepper", "data-step") == str(k)
    assert page.inner_text("#step-counter").startswith(f"action #{k} · {shown}")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    # page.url follows the browser's history events, so it is awaited, not read at once
    expect(page).to_have_url(re.compile(rf"#step={k}$"))
    command = page.inner_text("#fork-command")
    at = int(re.search(r"--at (\d+)", command).group(1))
    assert at == k and thread in command
    recorded = _rows(
        view_db.path, "select action from steps where thread_id = ? and idx = ?", [thread, at]
    )[0]["action"]
    assert recorded == shown
    # the fork built from it replaces that very action
    db = tmp_path / "copy.sqlite"
    shutil.copyfile(view_db.path, db)
    other = "submit" if shown != "submit" else "inspect " + shown.split()[-1]
    out = run_cli("fork", thread, "--at", str(at), "--action", other, "--db", str(db)).stdout
    assert f"at action #{at}" in out
    assert re.search(rf"original : {re.escape(shown)}\s", out)
    fork = next(w for w in out.split() if w.count("-") == 4 and w != thread)
    data = load_episode(db, fork)
    assert data["fork"]["at_index"] == at
    assert data["steps"][at]["nodes"]["fork"]["decision"]["action"] == other


LABEL_BOXES = """() => {
  const cy = window.fakegangView.cy;
  const z = cy.zoom();
  return cy.nodes('.inspected, .flagged, .hit, .falseflag').map(n => {
    const b = n.renderedBoundingBox({includeNodes: false, includeEdges: false,
                                     includeLabels: true, includeOverlays: false});
    const font = parseFloat(n.style('font-size'));
    return {id: n.id(), x1: b.x1, x2: b.x2, y1: b.y1, y2: b.y2, w: b.w, shown: font * z};
  });
}"""


def _overlaps(boxes: list[dict]) -> list[tuple[str, str]]:
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]:
                out.append((a["id"], b["id"]))
    return out


def test_hard_episode_labels_of_inspected_and_flagged_accounts_do_not_overlap(
    page, viewer, view_db
):
    thread = _open_hard_debrief(page, viewer, view_db)
    boxes = page.evaluate(LABEL_BOXES)
    inspected = _rows(
        view_db.path, "select observation from observations where thread_id = ?", [thread]
    )[0]["observation"]
    n_inspected = len(json.loads(inspected)["inspected_ids"])
    assert len(boxes) >= n_inspected > 10, "a hard episode inspects many accounts"
    # labels are drawn at the default zoom (Cytoscape hides those under min-zoomed-font-size)
    assert min(b["shown"] for b in boxes) >= 7.0
    assert all(b["w"] > 0 for b in boxes)
    assert _overlaps(boxes) == []
    # the crowd is collapsed: far fewer nodes than accounts seen
    nodes = page.evaluate("window.fakegangView.cy.nodes().length")
    seen = int(page.get_attribute("#case-graph", "data-visible-nodes"))
    assert nodes < seen / 2, (nodes, seen)


def test_why_this_account_explains_each_flagged_and_missed_account(page, viewer, view_db):
    thread = _first_training_thread(view_db)
    final = json.loads(
        _rows(view_db.path, "select observation from observations where thread_id = ?", [thread])[
            0
        ]["observation"]
    )
    ring, flagged = set(final["ring_ids"]), set(final["flagged_ids"])
    _open_episode(page, viewer, thread)
    page.keyboard.press("End")
    page.wait_for_selector("#why")
    panels = page.locator("#why .why")
    ids = {panels.nth(i).get_attribute("data-account") for i in range(panels.count())}
    assert ids == flagged | ring
    for i in range(panels.count()):
        p = panels.nth(i)
        aid = p.get_attribute("data-account")
        text = p.inner_text()
        if aid in flagged:
            assert "log-odds" in text and "P(ring)" in text  # the evidence, feature by feature
            assert ("member: hit" if aid in ring else "innocent: false flag") in text
        else:
            assert "member: missed" in text
    # the printable case file lists the same accounts
    page.click("#case-file-link")
    page.wait_for_selector("article.case-file")
    listed = page.eval_on_selector_all(
        "article.case-file section.entry", "s => s.map(e => e.dataset.account)"
    )
    assert set(listed) == flagged | ring


def test_clicking_a_crowd_lists_its_accounts_and_a_flagged_account_its_evidence(
    page, viewer, view_db
):
    thread = _open_hard_debrief(page, viewer, view_db)
    crowd = page.evaluate(
        "(() => { const n = window.fakegangView.cy.nodes('.crowd')[0]; n.emit('tap');"
        " return [n.id(), parseInt(n.data('label').slice(1), 10)]; })()"
    )
    info = page.inner_text("#account-info")
    at = int(crowd[0].split(":")[1])
    assert info.startswith(f"{crowd[1]} accounts revealed by action #{at} (")
    assert len(info.split(": ")[-1].split()) == crowd[1]  # every member listed
    flagged = page.evaluate(
        "(() => { const n = window.fakegangView.cy.nodes('.hit, .falseflag')[0]; n.emit('tap');"
        " return n.id(); })()"
    )
    info = page.inner_text("#account-info")
    assert info.startswith(f"{flagged}:") and "flagged at #" in info and "log-odds" in info
    # before its flag, the account's evidence is not shown: no look ahead
    first_flag = _rows(
        view_db.path,
        "select min(idx) i from steps where thread_id = ? and action = ?",
        [thread, f"flag {flagged}"],
    )[0]["i"]
    page.evaluate(f"window.fakegangView.go({first_flag - 1})")
    page.evaluate(f"window.fakegangView.cy.getElementById('{flagged}').emit('tap')")
    assert "log-odds" not in page.inner_text("#account-info")


def test_a_node_without_a_renderer_gets_the_generic_panel(browser, env_url, tmp_path):
    """The node recipe's throwaway `audit` node (tests/helpers/extra_node.py): episode.js knows
    nothing of it, and still draws its panel, in the order the nodes ran."""
    from extra_node import play_audited
    from view_fixtures import serving_viewer

    db = tmp_path / "extra.sqlite"
    _, thread = play_audited(db, env_url)
    with serving_viewer(db) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        watch = Watch(url)
        context.route("**/*", watch.route)
        pg = context.new_page()
        pg.on("pageerror", lambda e: watch.errors.append(str(e)))
        try:
            _open_episode(pg, url, thread)
            ids = pg.eval_on_selector_all("#nodes > .node", "ps => ps.map(p => p.id)")
            assert ids == ["node-start", "node-observe", "node-rule_check", "node-llm_decide",
                           "node-arbitrate", "node-audit", "node-step_env"]  # fmt: skip
            assert pg.get_attribute("#node-audit", "data-panel") == "generic"
            action = _field(pg, "action")
            assert _field(pg, "generic-audit_note") == f"checked {action}"
            assert _field(pg, "start-accounts") == "5"
            pg.keyboard.press("ArrowRight")
            assert pg.get_attribute("#stepper", "data-step") == "1"
            assert pg.locator("#node-start").count() == 0  # the start belongs to action #0
            assert _field(pg, "generic-audit_note") == f"checked {_field(pg, 'action')}"
        finally:
            context.close()
        assert watch.errors == [] and watch.foreign == []
