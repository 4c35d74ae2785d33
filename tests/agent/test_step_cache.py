"""The one per-step cache of the nodes: bounded, keyed by step, cleared by reset_all."""

from __future__ import annotations

import pytest

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.resources import StepCache


def test_bounded_oldest_first() -> None:
    cache = StepCache(max_entries=3)
    for i in range(5):
        cache.put("t", i, "scores", i * 10)
    assert len(cache) == 3
    assert [cache.get("t", i, "scores") for i in range(5)] == [None, None, 20, 30, 40]
    assert cache.get("t", 4, "observation") is None  # kinds do not mix
    assert cache.get("other", 4, "scores") is None


def test_reset_all_clears_it_and_load_falls_back_to_sqlite(tmp_path) -> None:
    ctx = Context(db_path=str(tmp_path / "m.sqlite"), env_url="http://127.0.0.1:9")
    resources.STEP_CACHE.put("thread-a", 2, "observation", "cached")
    assert resources.load_observation(ctx, "thread-a", 2) == "cached"
    resources.reset_all()
    assert len(resources.STEP_CACHE) == 0
    with pytest.raises(LookupError, match="thread-a at action 2"):
        resources.load_observation(ctx, "thread-a", 2)
