"""Rendered blocks: the text between `<!-- render:NAME -->` and `<!-- /render:NAME -->` in
README.md and every docs page is made by the renderer registered here under NAME, so a figure
is typed nowhere and a hand edit inside a block is caught by `--check`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bench.docs import bench_blocks, code_blocks, kept, learner
from bench.docs.md import RenderError, Results

#: A block whose markers are indented (inside a list item) gets its text indented alike.
BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)(?P<open><!-- render:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)"
    r"(?P<close>(?P=indent)<!-- /render:(?P=name) -->)",
    re.S | re.M,
)
OPENING = re.compile(r"<!-- render:([a-z0-9-]+) -->")

RENDERERS: dict[str, Callable[[Results], str]] = {
    "tasks": code_blocks.render_tasks,
    "graph": code_blocks.render_graph,
    "model-defaults": code_blocks.render_model_defaults,
    "settings": code_blocks.render_settings,
    "evasion-budget": code_blocks.render_evasion_budget,
    "traces": code_blocks.render_traces,
    "trace-generations": code_blocks.render_trace_generations,
    "trace-list": code_blocks.render_trace_list,
    "headline": bench_blocks.render_headline,
    "bench-table": bench_blocks.render_bench_table,
    "quality": bench_blocks.render_quality,
    "tactics": bench_blocks.render_tactics,
    "campaigns": bench_blocks.render_campaigns,
    "scale": bench_blocks.render_scale,
    "resources": bench_blocks.render_resources,
    "training": bench_blocks.render_training,
    "calibration": bench_blocks.render_calibration,
    "agent-campaigns": kept.render_agent_campaigns,
    "pivot-shift": kept.render_pivot_shift,
    "adaptive-calibration": kept.render_adaptive_calibration,
    "learner-campaigns": learner.render_learner_campaigns,
    "make-run-hard-phase": learner.render_make_run,
    "campaign-figure-medium-mixed": kept.render_figure_caption("medium-mixed-fake"),
    "campaign-figure-hard-mixed": kept.render_figure_caption("hard-mixed-fake"),
}


def pages(root: Path) -> list[Path]:
    """README.md, the environment package's README (what `/metadata` serves) and every Markdown
    page of the docs site."""
    return [
        root / "README.md",
        root / "fakegang_env" / "README.md",
        *sorted((root / "docs").rglob("*.md")),
    ]


def render_page(text: str, results: Results, cache: dict[str, str], where: str) -> str:
    """`text` with every rendered block replaced by its current rendering."""
    names = OPENING.findall(text)
    closed = [m.group("name") for m in BLOCK.finditer(text)]
    if names != closed:
        unclosed = sorted(set(names) - set(closed)) or names
        raise RenderError(f"{where}: block {unclosed[0]!r} has no closing marker")

    def replace(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in RENDERERS:
            raise RenderError(f"{where}: unknown block {name!r} (known: {', '.join(RENDERERS)})")
        if name not in cache:
            cache[name] = RENDERERS[name](results).strip() + "\n"
        indent = m.group("indent")
        lines = cache[name].splitlines(keepends=True)
        body = "".join(indent + line if line.strip() else line for line in lines)
        return indent + m.group("open") + body + m.group("close")

    return BLOCK.sub(replace, text)


def stale_blocks(old: str, new: str) -> list[str]:
    before = {m.group("name"): m.group("body") for m in BLOCK.finditer(old)}
    return [
        m.group("name")
        for m in BLOCK.finditer(new)
        if before.get(m.group("name")) != m.group("body")
    ]


def render_blocks(root: Path, results: Results, check: bool) -> list[str]:
    """Render (with `check`, only compare) every page's blocks; `page: block` for each stale."""
    cache: dict[str, str] = {}
    stale: list[str] = []
    for page in pages(root):
        if not page.exists():
            continue
        where = str(page.relative_to(root))
        old = page.read_text()
        new = render_page(old, results, cache, where)
        if new != old:
            stale += [f"{where}: {name}" for name in stale_blocks(old, new)]
            if not check:
                page.write_text(new)
    return stale
