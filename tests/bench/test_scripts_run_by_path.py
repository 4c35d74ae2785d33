"""Every bench script starts the way its docstring says: `python bench/<role>/<script>.py`,
from the checkout, with no PYTHONPATH (a script that imports `bench.*` puts the checkout on its
path itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(
    p.relative_to(ROOT).as_posix()
    for role in ("experiments", "speed", "fits")
    for p in (ROOT / "bench" / role).glob("*.py")
    if 'if __name__ == "__main__"' in p.read_text()
)


def test_the_scripts_are_found() -> None:
    assert "bench/experiments/adaptive_losses.py" in SCRIPTS
    assert "bench/experiments/train_time.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_script_run_by_path_shows_its_help(script: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, script, "--help"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
