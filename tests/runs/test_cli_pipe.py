"""CLI output piped into a reader that stops early (`| head`) ends quietly, as shell tools do."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "argv",
    [
        ["fakegang.cli.main", "env", "generate", "--task", "hard", "--seed", "1"],
        ["fakegang_env.cli", "generate", "--task", "hard", "--seed", "1"],
    ],
)
def test_a_closed_pipe_ends_quietly(argv: list[str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(64)  # the reader takes the first bytes of a long document, then goes
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code == 141
