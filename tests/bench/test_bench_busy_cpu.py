"""bench/speed/busy_cpu.py's parts that do not need a training run: the burner starts on one core
and is gone afterwards, the table says whether the target was met, bad arguments are refused."""

from __future__ import annotations

import os

import pytest
from bench_modules import load_bench

busy_cpu = load_bench("busy_cpu")


def test_the_burner_spins_on_one_core_and_stops() -> None:
    with busy_cpu.burner(0) as pid:
        assert os.sched_getaffinity(pid) == {0}
        with open(f"/proc/{pid}/stat") as fh:
            assert fh.read().split()[2] in ("R", "S")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _run(label: str, wall: float, ratio: float) -> dict:
    return {
        "label": label, "wall_s": wall, "ratio": ratio, "load_before": 1.0, "episodes": 50,
        "wins": 49, "llm_calls": 30, "llm_failed": 0, "llm_timeouts": 0,
        "episodes_model_not_asked_again": 0,
    }  # fmt: skip


@pytest.mark.parametrize(("ratio", "verdict"), [(1.8, "met"), (3.1, "NOT met")])
def test_table_says_whether_the_target_was_met(ratio, verdict) -> None:
    result = {
        "cores": 2,
        "target_ratio": 2.5,
        "ratio": ratio,
        "runs": [_run("quiet", 100.0, 1.0), _run("busy", 100.0 * ratio, ratio)],
    }
    text = busy_cpu.table(result)
    assert f"busy / quiet = {ratio:.2f}x (target at most 2.5x: {verdict})" in text
    rows = [line.split()[0] for line in text.splitlines()[2:-1]]
    assert rows == ["quiet", "busy"]


def test_bad_episode_count_is_refused(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        busy_cpu.main(["--episodes", "0"])
    assert exc.value.code == 2
    assert "--episodes must be at least 1" in capsys.readouterr().err
