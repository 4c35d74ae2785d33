"""bench/experiments/same_figures.py: timings never count as a moved figure; anything else does."""

from __future__ import annotations

import os
import subprocess
import sys

from bench.experiments.same_figures import ROOT, differences, link_packages, without_timings


def test_timings_are_left_out_and_every_other_figure_compared() -> None:
    before = {"wall_s": 3.0, "refit_s_max": 0.2, "_db": "/tmp/a", "auc": {"learning": 0.64},
              "curve": [1.0, 0.5], "episode_ms": 9}  # fmt: skip
    after = {"wall_s": 9.0, "refit_s_max": 0.4, "_db": "/tmp/b", "auc": {"learning": 0.68},
             "curve": [1.0, 0.5], "episode_ms": 7}  # fmt: skip
    a, b = without_timings(before), without_timings(after)
    assert set(a) == {"auc", "curve"}
    assert differences(a, b) == [("auc.learning", 0.64, 0.68)]
    assert differences(a, a) == []
    # a list that grew is one moved figure, not a crash
    assert differences({"c": [1]}, {"c": [1, 2]}) == [("c", [1], [1, 2])]


def test_a_worktree_imports_its_own_graph_tools_and_prompts(tmp_path) -> None:
    """The editable install maps `fakegang.tools` to this checkout's tools/: a commit's tree
    played with `PYTHONPATH=tree` must import its own."""
    tree = tmp_path / "tree"
    git = ["git", "-C", str(ROOT)]
    subprocess.run([*git, "worktree", "add", "-f", "--detach", "-q", str(tree), "HEAD"], check=True)
    try:
        links = link_packages(tree)
        assert {p.name for p in links} == {"graph", "tools", "prompts"}
        probe = (
            "import fakegang.graph.graph as g, fakegang.tools.rules.engine as e, "
            "fakegang.prompts as p, fakegang_env as f; "
            "print(g.__file__, e.__file__, p.__file__, f.__file__)"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=tree, env=os.environ | {"PYTHONPATH": str(tree)},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        files = done.stdout.split()
        assert len(files) == 4 and all(f.startswith(str(tree)) for f in files), files
        assert link_packages(tree) == []  # a second call changes nothing
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)
