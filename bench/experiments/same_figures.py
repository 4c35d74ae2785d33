"""Do two commits give the same deterministic `make bench` figures?

    python bench/experiments/same_figures.py COMMIT COMMIT [COMMIT ...] [--json]

A refactor should move no figure that does not depend on time. For each commit this plays, from
a throwaway git worktree of it, the sections of `make bench` whose figures are a pure function
of the code and the seeds (policies, the rules-only agent, the in-process campaigns), then
compares each commit with the one before it, timings left out. It prints, per pair and section,
"identical" or the figures that moved. Roughly 5 minutes a commit on 2 quiet cores.

Commits from before bench/ was split by role (ce8c11d and older) are played from their flat
bench/ modules.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = ("policies", "rules_agent", "campaigns")
#: Keys whose values are durations (they differ between any two runs).
TIMING_SUFFIXES = ("_s", "_ms", "seconds")
SHOWN_DIFFERENCES = 8


def measure(out: Path) -> None:
    """Play the deterministic sections from the checkout in the current directory."""
    if Path("bench/suite").is_dir():
        from bench.speed import env_speed
        from bench.suite.learning_sections import bench_campaigns
        from bench.suite.quality_sections import bench_policies, bench_rules_agent
        from bench.suite.run_all import parse_args
    else:  # the flat bench/ of older commits
        sys.path.insert(0, str(Path("bench").resolve()))
        import env_speed  # type: ignore[no-redef]
        from learning_sections import bench_campaigns  # type: ignore[no-redef]
        from quality_sections import bench_policies, bench_rules_agent  # type: ignore[no-redef]
        from run_all import parse_args  # type: ignore[no-redef]
    args = parse_args([])
    work = Path(tempfile.mkdtemp(prefix="fakegang-same-"))
    port = env_speed.free_port()
    server = env_speed.start_server(port)
    url = f"http://127.0.0.1:{port}"
    try:
        figures = {
            "policies": bench_policies(args.seeds),
            "rules_agent": bench_rules_agent(url, args.seeds, args.concurrency, work),
            "campaigns": bench_campaigns(False),
        }
    finally:
        server.terminate()
    out.write_text(json.dumps(figures, indent=1, default=str))


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: without_timings(v)
            for k, v in value.items()
            if not (k.endswith(TIMING_SUFFIXES) or "_s_" in k or k.startswith("_"))
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def differences(before: Any, after: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, before, after) of every figure that moved."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            d
            for k in sorted(set(before) | set(after))
            for d in differences(before.get(k), after.get(k), f"{path}.{k}" if path else k)
        ]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        pairs = enumerate(zip(before, after, strict=True))
        return [d for i, (b, a) in pairs for d in differences(b, a, f"{path}[{i}]")]
    return [] if before == after else [(path, before, after)]


def link_packages(tree: Path) -> list[Path]:
    """Make `PYTHONPATH=tree` import every package from the tree; returns the links made.

    pyproject's package-dir maps `fakegang.graph` to `graph/` (and `tools/`, `prompts/`): only
    the editable install's finder knows that, and it points at the checkout it was installed
    from. Without these links a tree's `fakegang/` and `fakegang_env/` ran with the installed
    checkout's graph, tools and prompts."""
    config = tomllib.loads((tree / "pyproject.toml").read_text())
    links = []
    for name, folder in config["tool"]["setuptools"].get("package-dir", {}).items():
        link, source = tree.joinpath(*name.split(".")), tree / folder
        if link != source and source.is_dir() and not link.exists():
            link.symlink_to(source.resolve(), target_is_directory=True)
            links.append(link)
    return links


@contextmanager
def commit_tree(commit: str, parent: Path | None = None) -> Iterator[tuple[Path, dict[str, str]]]:
    """A throwaway worktree of `commit` (under `parent`, default a new temporary directory)
    with its packages linked, and the environment that imports them from it; removed after."""
    parent = parent or Path(tempfile.mkdtemp(prefix=f"fakegang-{commit}-"))
    tree = parent / "tree"
    git = ["git", "-C", str(ROOT)]
    subprocess.run([*git, "worktree", "add", "-f", "--detach", "-q", str(tree), commit], check=True)
    try:
        link_packages(tree)
        yield tree, os.environ | {"PYTHONPATH": str(tree), "AWS_EC2_METADATA_DISABLED": "true"}
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)


def play_commit(commit: str, into: Path) -> dict:
    """The commit's deterministic figures, played from a throwaway worktree."""
    out = into / f"{commit}.json"
    with commit_tree(commit) as (tree, env):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", str(out)]
        subprocess.run(cmd, cwd=tree, env=env, check=True)
    return without_timings(json.loads(out.read_text()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commits", nargs="*", help="two or more commits, oldest first")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # one commit's worker
    ap.add_argument("--out-dir", type=Path, default=None, help="keep each commit's figures here")
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON")
    a = ap.parse_args(argv)
    if a.measure:
        measure(a.measure)
        return 0
    if len(a.commits) < 2:
        ap.error("name at least two commits")
    into = a.out_dir or Path(tempfile.mkdtemp(prefix="fakegang-same-figures-"))
    into.mkdir(parents=True, exist_ok=True)
    figures = {c: play_commit(c, into) for c in a.commits}
    report = []
    for before, after in zip(a.commits, a.commits[1:], strict=False):
        for section in SECTIONS:
            moved = differences(figures[before][section], figures[after][section])
            report.append({"before": before, "after": after, "section": section, "moved": moved})
    if a.json:
        print(json.dumps(report, indent=1, default=str))
        return 0
    for row in report:
        moved = row["moved"]
        verdict = "identical" if not moved else f"{len(moved)} figures moved"
        print(f"{row['before']} → {row['after']}  {row['section']:<12} {verdict}")
        for path, b, c in moved[:SHOWN_DIFFERENCES]:
            print(f"    {path}: {b} → {c}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
