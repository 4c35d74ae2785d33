"""`fakegang report`: generated from a short real training run and read back.

The run is three easy episodes with the deterministic stand-in model (`--model fake`), played
through the real graph and environment server. The page must reference every PNG, every PNG
must be a real picture, and the numbers on the page must equal those in metrics.jsonl.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from fakegang.cli.main import main
from fakegang.report.data import ReportError, load_run, parse_episode_list, steps_of
from fakegang.report.html import EPISODE_KEYS
from fakegang.report.network import replay


class Cells(HTMLParser):
    """Collects <img src>, and the data-key cells of rows tagged data-episode / data-phase."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.rows: dict[tuple[str, str], dict[str, str]] = {}
        self.summary: dict[str, str] = {}
        self._row: tuple[str, str] | None = None
        self._key: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images.append(a["src"])
        elif tag == "tr":
            self._row = None
            for kind in ("episode", "phase"):
                if f"data-{kind}" in a:
                    self._row = (kind, a[f"data-{kind}"])
                    self.rows[self._row] = {}
        elif tag == "td" and "data-key" in a:
            self._key = a["data-key"]

    def handle_data(self, data):
        if self._key is None:
            return
        if self._row is not None:
            self.rows[self._row][self._key] = data
        else:
            self.summary[self._key] = data

    def handle_endtag(self, tag):
        if tag == "td":
            self._key = None
        elif tag == "tr":
            self._row = None


def as_value(text: str):
    if text in ("true", "false"):
        return text == "true"
    if text == "–":
        return None
    try:
        return float(text)
    except ValueError:
        return text


def same(page: str, expected) -> bool:
    got = as_value(page)
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return got == expected
    return abs(got - expected) <= 1e-4 * max(1.0, abs(expected))


@pytest.fixture(scope="module")
def trained(tmp_path_factory, env_url):
    from fakegang.graph.context import Context
    from fakegang.runs.runner import TrainOptions, train

    root = tmp_path_factory.mktemp("report_run")
    opts = TrainOptions(
        context=Context(model="fake", db_path=str(root / "mem.sqlite")),
        env_url=env_url,
        task="easy",
        episodes=3,
        log_dir=str(root / "runs"),
    )
    result = train(opts, out=io.StringIO())
    metrics = [json.loads(line) for line in Path(result["metrics"]).read_text().splitlines()]
    return {"root": root, "run_id": result["run_id"], "db": opts.db, "metrics": metrics}


@pytest.fixture(scope="module")
def report(trained):
    out = trained["root"] / "report"
    assert main(["report", trained["run_id"], "--db", trained["db"], "--out", str(out)]) == 0
    parser = Cells()
    parser.feed((out / "index.html").read_text(encoding="utf-8"))
    return out, parser


def test_page_references_every_png_and_each_is_a_real_picture(report) -> None:
    out, page = report
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert sorted(page.images) == pngs
    assert {"curves.png", "alpha.png", "modes.png", "llm.png"} <= set(pngs)
    assert any(name.startswith("episode_") for name in pngs)
    for name in pngs:
        with Image.open(out / name) as img:
            assert img.format == "PNG"
            assert img.width >= 600 and img.height >= 300, name
            pixels = np.asarray(img.convert("RGB")).reshape(-1, 3)
        colours = np.unique(pixels, axis=0)
        assert len(colours) > 20, f"{name} is nearly blank ({len(colours)} colours)"
        non_white = (pixels < 245).any(axis=1).mean()
        assert non_white > 0.02, f"{name}: only {non_white:.1%} of the pixels are drawn"
    html = (out / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"(src|href)=[\"']https?://", html), "the page must work offline"


def test_episode_numbers_on_the_page_equal_metrics_jsonl(trained, report) -> None:
    _, page = report
    metrics = trained["metrics"]
    assert len(metrics) == 3
    for m in metrics:
        cells = page.rows[("episode", str(m["episode"]))]
        assert set(cells) == set(EPISODE_KEYS)
        for key in EPISODE_KEYS:
            assert same(cells[key], m[key]), (m["episode"], key, cells[key], m[key])
    assert int(page.summary["episodes"]) == len(metrics)
    assert int(page.summary["LLM calls"]) == sum(m["llm_calls"] for m in metrics)
    assert int(page.summary["LLM tokens"]) == sum(m["llm_tokens"] for m in metrics)
    mean_grader = sum(m["grader_score"] for m in metrics) / len(metrics)
    assert same(page.summary["mean grader"], round(mean_grader, 4))


def test_phase_table_equals_metrics_jsonl(trained, report) -> None:
    _, page = report
    metrics = trained["metrics"]
    phase = page.rows[("phase", "1")]
    assert [k for k in page.rows if k[0] == "phase"] == [("phase", "1")]  # one task, one phase
    n = len(metrics)
    expected = {
        "task": "easy",
        "first": 1,
        "last": 3,
        "episodes": n,
        "wins": sum(m["won"] for m in metrics),
        "mean_reward": round(sum(m["reward"] for m in metrics) / n, 3),
        "mean_grader": round(sum(m["grader_score"] for m in metrics) / n, 3),
        "mean_steps": round(sum(m["steps_used"] for m in metrics) / n, 2),
        "alpha_first": metrics[0]["alpha_used"],
        "alpha_last": metrics[-1]["alpha_used"],
        "agree": sum(m["mode_agree"] for m in metrics),
        "rule_override": sum(m["mode_rule"] for m in metrics),
        "llm": sum(m["mode_llm"] for m in metrics),
        "llm_calls": sum(m["llm_calls"] for m in metrics),
        "llm_tokens": sum(m["llm_tokens"] for m in metrics),
    }
    for key, value in expected.items():
        assert same(phase[key], value), (key, phase[key], value)


def test_replay_reproduces_every_stored_step(trained) -> None:
    data = load_run(trained["run_id"], trained["db"])
    for m in trained["metrics"]:
        steps = steps_of(trained["db"], data.thread_of[m["episode"]])
        rep = replay(m["task"], m["seed"], steps)
        assert rep.diverged_at is None
        assert rep.final["message"] == m["final_message"]
        assert rep.final["done"]
        assert len(rep.events) == len(m["action_log"])


def test_requested_episode_and_database_fallback(trained, tmp_path) -> None:
    """--episodes draws exactly those; without metrics.jsonl the page says so and still agrees."""
    empty_logs = tmp_path / "no_logs"
    empty_logs.mkdir()
    out = tmp_path / "rep"
    args = ["report", trained["run_id"], "--db", trained["db"], "--out", str(out)]
    assert main([*args, "--episodes", "2", "--log-dir", str(empty_logs)]) == 0
    assert sorted(p.name for p in out.glob("episode_*.png")) == ["episode_002.png"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "numbers come from the database" in html
    page = Cells()
    page.feed(html)
    for m in trained["metrics"]:
        cells = page.rows[("episode", str(m["episode"]))]
        for key in EPISODE_KEYS:
            assert same(cells[key], m[key]), (key, cells[key], m[key])


def test_latest_is_the_latest_training_run_and_says_so(
    trained, env_url, tmp_path, monkeypatch, capsys
) -> None:
    """An evaluation played after the training is newer, but `latest` means training; the
    report goes to the project's state directory by default."""
    from fakegang.runs.evaluation import evaluate

    db = str(tmp_path / "mem.sqlite")
    shutil.copy(trained["db"], db)
    ev = evaluate(task="easy", seeds=[0], model="fake", db=db, env_url=env_url)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["report", "latest", "--db", db]) == 0
    out = capsys.readouterr().out
    assert f"latest training run: {trained['run_id']} (started " in out
    index = tmp_path / "checkpoints" / "reports" / trained["run_id"] / "index.html"
    assert (
        f"report written to {Path('checkpoints', 'reports', trained['run_id'], 'index.html')}"
        in out
    )
    assert trained["run_id"] in index.read_text(encoding="utf-8")
    assert main(["report", ev["run_id"], "--db", db, "--out", str(tmp_path / "e")]) == 0

    only_eval = str(tmp_path / "eval-only.sqlite")
    evaluate(task="easy", seeds=[1], model="fake", db=only_eval, env_url=env_url)
    capsys.readouterr()
    assert main(["report", "latest", "--db", only_eval]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the database holds no training run yet (other runs: eval-")


def test_bad_input_gives_a_clear_error(trained, tmp_path, capsys) -> None:
    db = trained["db"]
    assert main(["report", "r-nope", "--db", db, "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "unknown run id 'r-nope'" in err and trained["run_id"] in err
    assert not (tmp_path / "a").exists()
    assert main(["report", "x", "--db", str(tmp_path / "missing.sqlite")]) == 2
    assert "no database at" in capsys.readouterr().err
    assert not (tmp_path / "missing.sqlite").exists()  # never created by a report
    not_db = tmp_path / "junk.sqlite"
    not_db.write_text("not sqlite")
    assert main(["report", "x", "--db", str(not_db)]) == 2
    # caught by the --db check every command runs first (fakegang/database_check.py)
    assert "is not an SQLite database" in capsys.readouterr().err
    run = trained["run_id"]
    assert main(["report", run, "--db", db, "--episodes", "9", "--out", str(tmp_path / "b")]) == 2
    assert "episodes [9] are not in this run (it has 1-3)" in capsys.readouterr().err
    assert main(["report", run, "--db", db, "--episodes", "a-b"]) == 2
    assert "--episodes expects numbers" in capsys.readouterr().err
    broken_logs = tmp_path / "logs"
    broken_logs.mkdir()
    (broken_logs / "metrics.jsonl").write_text("{not json\n")
    with pytest.raises(ReportError, match="line 1 is not JSON"):
        load_run(run, db, broken_logs)


def test_parse_episode_list() -> None:
    assert parse_episode_list("1,5,7-9,5") == [1, 5, 7, 8, 9]
    assert parse_episode_list(None) is None


def test_report_refuses_an_output_path_that_is_a_file(trained, tmp_path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["report", trained["run_id"], "--db", trained["db"], "--out", str(blocker)])
    assert code == 2
    assert "cannot create the output directory" in capsys.readouterr().err
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_default_pictures_are_the_first_win_and_the_worst_loss() -> None:
    from fakegang.report.data import choose_episodes, phases, sliding_win_rate

    def row(ep, task, won, grader, reward=1.0):
        return {"episode": ep, "task": task, "won": won, "grader_score": grader, "reward": reward}

    rows = [
        row(1, "easy", False, 0.4),
        row(2, "easy", True, 0.9),
        row(3, "medium", False, 0.1),
        row(4, "medium", False, 0.1, reward=-2.0),
        row(5, "medium", True, 0.95),
    ]
    assert choose_episodes(rows, None) == [(2, "first win"), (4, "worst loss")]
    assert choose_episodes(rows[1:2], None) == [(2, "first win")]
    assert sliding_win_rate(rows, window=2) == [0.0, 0.5, 0.0, 0.0, 0.5]
    for r in rows:
        r.update(recall=1.0, precision=1.0, steps_used=10, alpha_used=0.2, mode_agree=0)
        r.update(mode_rule=1, mode_llm=0, llm_calls=0, llm_tokens=0)
    got = [(p["task"], p["first"], p["last"], p["wins"]) for p in phases(rows)]
    assert got == [("easy", 1, 2, 1), ("medium", 3, 5, 1)]


def test_missing_plot_packages_are_named(monkeypatch, capsys) -> None:
    import importlib.util

    from fakegang.cli import report as cli_report

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "networkx" else real(name)
    )
    assert cli_report.missing_packages() == ["networkx"]
    assert main(["report", "latest", "--db", "nowhere.sqlite"]) == 2
    assert "needs networkx: pip install 'fakegang[report]'" in capsys.readouterr().err
