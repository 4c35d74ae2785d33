"""bench/fits/fit_trace_yields.py: re-fitting gives the shipped pivot yields, so the file is
never stale (a change to the generator or a trace kind must re-run the fit)."""

from __future__ import annotations

import json

import pytest
from bench_modules import load_bench

from fakegang.tools.rules.pivots import shipped_yields

fit_trace_yields = load_bench("fit_trace_yields")


def test_refitting_gives_the_shipped_yields(tmp_path) -> None:
    out = tmp_path / "pivot_yields.json"
    assert fit_trace_yields.main(["--out", str(out)]) == 0
    refit = json.loads(out.read_text())
    assert refit == json.loads(fit_trace_yields.OUT.read_text())
    assert refit["yields"]["hard"] == shipped_yields("hard")


def test_the_fit_refuses_test_seeds(capsys) -> None:
    with pytest.raises(SystemExit):
        fit_trace_yields.main(["--seeds", "0-9"])
    assert "training seeds" in capsys.readouterr().err
