"""bench/experiments/train_time.py: a commit's training timed from its own worktree."""

from __future__ import annotations

import subprocess

import pytest

from bench.experiments.train_time import main, time_commit


def test_one_short_training_at_head_is_timed_with_its_phases(capsys) -> None:
    run = time_commit("HEAD", ["--task", "easy", "--episodes", "2", "--model", "fake"])
    assert run["commit"] == "HEAD" and run["wall_s"] > 0
    (easy,) = run["phases"]
    assert (easy["task"], easy["episodes"]) == ("easy", 2)
    assert easy["llm_calls"] >= 0 and 0 <= easy["seconds"] <= run["wall_s"]


def test_a_commit_that_does_not_exist_fails_before_playing() -> None:
    with pytest.raises(subprocess.CalledProcessError):
        main(["no-such-commit-0000"])
