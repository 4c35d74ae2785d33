"""What a training run prints at its end: one summary block (the periodic summary every ten
episodes used to repeat the final one on a run of 10, 20, ... 50 episodes)."""

from __future__ import annotations

import io

from runs_helpers import options

from fakegang.runs.runner import train


def _printed(tmp_path, env_url, episodes: int) -> str:
    """What a training run of `episodes` episodes prints."""
    opts = options(tmp_path, env_url)
    opts.episodes = episodes
    out = io.StringIO()
    train(opts, out=out)
    return out.getvalue()


def test_a_ten_episode_run_prints_one_summary_block(env_url, tmp_path) -> None:
    text = _printed(tmp_path, env_url, 10)
    assert text.count("SUMMARY") == 1 and "FINAL SUMMARY" in text
    assert text.count("\nMemory:\n") == 2  # before the first episode and after the last


def test_an_eleven_episode_run_keeps_its_interim_summary(env_url, tmp_path) -> None:
    text = _printed(tmp_path, env_url, 11)
    assert "Episodes 1–10 SUMMARY" in text and text.count("SUMMARY") == 2
