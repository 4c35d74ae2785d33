"""The docs: figures rendered from the bench results, the campaign pictures and the generated
reference pages are current, hand edits are caught, and the site builds strictly (broken links
and pages missing from nav fail)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "bench" / "docs" / "render_docs.py"
LATEST = Path("bench") / "results" / "latest.json"
KEPT = Path("bench") / "results" / "campaigns"
PICTURE = Path("docs") / "img" / "campaign-medium-mixed.png"
MANIFEST = Path("docs") / "img" / "figures.json"


def render(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RENDER), "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def copy_docs(dest: Path) -> Path:
    """README, docs/, mkdocs.yml, LICENSE and the bench results: all the render and site read."""
    shutil.copy(ROOT / "README.md", dest / "README.md")
    shutil.copy(ROOT / "LICENSE", dest / "LICENSE")
    shutil.copy(ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", dest / "docs")
    (dest / LATEST).parent.mkdir(parents=True)
    shutil.copy(ROOT / LATEST, dest / LATEST)
    shutil.copytree(ROOT / KEPT, dest / KEPT)
    # the Python API page reads the agent's modules from graph/ under the site's root
    (dest / "graph").symlink_to(ROOT / "graph", target_is_directory=True)
    return dest


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict`, not `-q`: quiet mode stops counting the warnings strict fails on."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml")]
        + ["--site-dir", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_rendered_blocks_are_current():
    done = render(ROOT, "--check")
    assert done.returncode == 0, done.stderr


def test_a_hand_edit_in_a_rendered_block_fails_the_check(tmp_path):
    copy_docs(tmp_path)
    readme = tmp_path / "README.md"
    text = readme.read_text()
    block = re.search(r"<!-- render:headline -->\n(.*?)<!-- /render:headline -->", text, re.S)
    assert block and re.search(r"\d", block.group(1)), "README has no rendered headline figures"
    edited = block.group(1).replace("| what | figure |", "| what | figure (edited) |", 1)
    assert edited != block.group(1)
    readme.write_text(text.replace(block.group(1), edited))

    done = render(tmp_path, "--check")
    assert done.returncode == 1
    assert "README.md: headline" in done.stderr
    assert readme.read_text() != text  # --check changes nothing

    assert render(tmp_path).returncode == 0  # rendering repairs it
    assert readme.read_text() == text
    assert render(tmp_path, "--check").returncode == 0


def test_new_bench_results_make_their_blocks_stale(tmp_path):
    copy_docs(tmp_path)
    results = json.loads((tmp_path / LATEST).read_text())
    results["graph"]["overhead_ms_per_action"] += 1.0
    (tmp_path / LATEST).write_text(json.dumps(results))

    done = render(tmp_path, "--check")
    assert done.returncode == 1
    stale = set(done.stderr.split())
    assert "headline" in stale and "bench-table" in stale  # every block that shows the figure
    assert "tasks" not in stale and "graph" not in stale  # and only those


@pytest.mark.parametrize(
    ("page_text", "message"),
    [
        ("<!-- render:no-such-block -->\nx\n<!-- /render:no-such-block -->\n", "unknown block"),
        ("<!-- render:tasks -->\nno closing marker\n", "no closing marker"),
    ],
)
def test_bad_markers_are_one_line_errors(tmp_path, page_text, message):
    copy_docs(tmp_path)
    (tmp_path / "docs" / "extra.md").write_text(page_text)
    done = render(tmp_path, "--check")
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.count("\n") == 1


def test_every_renderer_is_used_somewhere():
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    used = {m for p in pages for m in re.findall(r"<!-- render:([a-z0-9-]+) -->", p.read_text())}
    sys.path.insert(0, str(ROOT))
    from bench.docs.blocks import RENDERERS

    assert used == set(RENDERERS)


def test_readme_is_short_and_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300
    assert lines[2].split()[:2] == ["make", "run"] and lines[3].split()[:2] == ["make", "test"]


def test_license_matches_pyproject():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'license = { text = "BSD-3-Clause" }' in pyproject
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")


def test_the_site_builds_strictly(tmp_path):
    done = mkdocs_build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    agent = (tmp_path / "site" / "agent.html").read_text()
    assert '<pre class="mermaid">' in agent and "llm_decide --&gt; arbitrate" in agent


def test_a_copy_of_the_docs_builds(tmp_path):
    """The control for the next test: the copy it breaks builds as it is."""
    copy_docs(tmp_path)
    done = mkdocs_build(tmp_path, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    api = (tmp_path / "site" / "reference" / "api.html").read_text()
    assert "compile_with_sqlite" in api and "play_campaign" in api


@pytest.mark.parametrize(
    ("page", "text", "named"),
    [
        ("agent.md", "\nSee [nowhere](no-such-page.md).\n", "no-such-page.md"),
        ("agent.md", "\nSee [a missing anchor](runs.md#no-such-section).\n", "no-such-section"),
        ("orphan.md", "# A page that nav does not list\n", "orphan.md"),
    ],
)
def test_the_strict_build_fails_on_broken_links_and_pages_missing_from_nav(
    tmp_path, page, text, named
):
    copy_docs(tmp_path)
    target = tmp_path / "docs" / page
    target.write_text((target.read_text() if target.exists() else "") + text)
    done = mkdocs_build(tmp_path, tmp_path / "site")
    assert done.returncode != 0
    assert named in done.stdout + done.stderr  # failed for the planted reason


def _drop_scale(root: Path) -> None:
    results = json.loads((root / LATEST).read_text())
    del results["scale"]
    (root / LATEST).write_text(json.dumps(results))


def _drop_kept(root: Path) -> None:
    (root / KEPT / "hard-mixed-fake.json").unlink()


@pytest.mark.parametrize(
    "damage, message",
    [
        (_drop_scale, "lacks the bench section or field 'scale'"),
        (_drop_kept, "hard-mixed-fake.json is missing (bench/experiments/keep_campaign.py keeps"),
    ],
)
def test_missing_results_are_a_one_line_error(tmp_path, damage, message):
    copy_docs(tmp_path)
    damage(tmp_path)
    done = render(tmp_path, "--check")
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_kept_campaign_renders_its_figures_and_when(tmp_path):
    copy_docs(tmp_path)
    kept = json.loads((tmp_path / KEPT / "hard-mixed-fake.json").read_text())
    kept["auc"]["learning"] = 0.123
    source = tmp_path / "campaign.json"
    source.write_text(json.dumps({k: v for k, v in kept.items() if k != "measured_at"}))
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "experiments" / "keep_campaign.py"), str(source)]
        + ["hard-mixed-fake"]
        + ["--into", str(tmp_path / KEPT)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rekept = json.loads((tmp_path / KEPT / "hard-mixed-fake.json").read_text())
    assert rekept["measured_at"].startswith("20") and "cores" in rekept["machine"]
    assert render(tmp_path, "--check").returncode == 1  # the page still shows the old figure
    assert render(tmp_path).returncode == 0
    page = (tmp_path / "docs" / "agent-pivots.md").read_text()
    assert "| hard | `mixed` | `fake` | **0.123** |" in page


def test_a_replaced_picture_is_stale_and_rendering_redraws_it(tmp_path):
    copy_docs(tmp_path)
    drawn = (tmp_path / PICTURE).read_bytes()
    (tmp_path / PICTURE).write_bytes(b"not the picture the renderer drew")

    done = render(tmp_path, "--check")
    assert done.returncode == 1
    assert f"{PICTURE}: figure" in done.stderr
    assert "campaign-hard-mixed-pivots.png" not in done.stderr  # only the replaced one

    assert render(tmp_path).returncode == 0
    redrawn = (tmp_path / PICTURE).read_bytes()
    assert redrawn.startswith(b"\x89PNG") and len(redrawn) > 10_000
    recorded = json.loads((tmp_path / MANIFEST).read_text())[PICTURE.name]
    assert recorded["png_sha256"] == hashlib.sha256(redrawn).hexdigest()
    assert render(tmp_path, "--check").returncode == 0
    assert len(drawn) > 10_000


def test_new_kept_results_make_their_picture_and_caption_stale(tmp_path):
    copy_docs(tmp_path)
    kept_path = tmp_path / KEPT / "medium-mixed-fake.json"
    kept = json.loads(kept_path.read_text())
    kept["curves"]["learning"] = [0.0] * len(kept["curves"]["learning"])
    kept["auc"]["learning"] = 0.0
    kept_path.write_text(json.dumps(kept))
    before = (tmp_path / PICTURE).read_bytes()

    done = render(tmp_path, "--check")
    assert done.returncode == 1
    assert f"{PICTURE}: figure" in done.stderr
    assert "README.md: campaign-figure-medium-mixed" in done.stderr

    assert render(tmp_path).returncode == 0
    assert (tmp_path / PICTURE).read_bytes() != before
    assert "`learning` 0.000" in (tmp_path / "README.md").read_text()


def test_a_hand_edit_in_a_generated_reference_page_fails_the_check(tmp_path):
    copy_docs(tmp_path)
    page = tmp_path / "docs" / "reference" / "cli.md"
    text = page.read_text()
    page.write_text(text.replace("## `fakegang train`", "## `fakegang train` (edited)", 1))

    done = render(tmp_path, "--check")
    assert done.returncode == 1
    assert "docs/reference/cli.md: generated page" in done.stderr

    assert render(tmp_path).returncode == 0
    assert page.read_text() == text


def test_the_cli_reference_has_every_command_and_the_http_one_every_route():
    sys.path.insert(0, str(ROOT))
    from bench.docs.reference import _commands, _openapi
    from fakegang.cli.main import build_parser

    cli = (ROOT / "docs" / "reference" / "cli.md").read_text()
    for words, _, _ in _commands(build_parser(), ["fakegang"]):
        assert f"## `{' '.join(words)}`" in cli
    assert "`--merge-into DB`" in cli and "deprecated alias of --merge-into" in cli
    http = (ROOT / "docs" / "reference" / "http.md").read_text()
    for path in _openapi()["paths"]:
        assert f"| `{path}` |" in http


def test_a_span_of_kept_results_names_the_end_day_when_it_crosses_one():
    from bench.docs.kept import measured

    def kept(at: str) -> dict:
        return {"measured_at": at, "machine": "2 cores", "commit": "abc1234"}

    same = measured([kept("2026-12-06T20:43:00+00:00"), kept("2026-12-06T21:43:00+00:00")])
    assert same == "*Measured on 2026-12-06 20:43 to 21:43 UTC (2 cores, code at abc1234).*"
    across = measured([kept("2026-12-06T20:43:00+00:00"), kept("2026-12-07T12:45:00+00:00")])
    assert "on 2026-12-06 20:43 to 2026-12-07 12:45 UTC" in across
