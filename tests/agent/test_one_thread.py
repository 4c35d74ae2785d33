"""The learner's numerical work runs on one native thread, from pools looked up once."""

from __future__ import annotations

from threadpoolctl import threadpool_info

from fakegang.tools.learning import one_thread as module
from fakegang.tools.learning.one_thread import one_thread


def _threads(api: str, among: set[str] | None = None) -> list[int]:
    return [
        i["num_threads"]
        for i in threadpool_info()
        if i["user_api"] == api and (among is None or i["filepath"] in among)
    ]


def test_the_limit_holds_inside_and_is_lifted_after():
    import sklearn.ensemble  # noqa: F401  (loads the OpenMP runtime the trees use)

    # each controller limits the pools it found; a library loaded after it was built (llama.cpp's
    # own BLAS and OpenMP, when an earlier test in this process loaded the local model) is not
    # the learner's and is left alone
    trees = module._controller("sklearn.ensemble").info()
    assert any(p["user_api"] == "openmp" for p in trees)  # built after sklearn's runtime loaded
    trees_pools = {p["filepath"] for p in trees}
    numpy_blas = {p["filepath"] for p in module._controller("numpy").info()}
    before = {api: _threads(api) for api in ("blas", "openmp")}
    with one_thread("sklearn.ensemble"):
        assert set(_threads("blas", trees_pools)) == {1}
        assert set(_threads("openmp", trees_pools)) == {1}
    with one_thread("numpy", "blas"):
        assert set(_threads("blas", numpy_blas)) == {1}
        assert _threads("openmp") == before["openmp"]  # only the API asked for
    assert {api: _threads(api) for api in ("blas", "openmp")} == before


def test_the_pools_are_looked_up_once_per_module():
    assert module._controller("numpy") is module._controller("numpy")
    with one_thread("numpy", "blas"), one_thread("numpy", "blas"):
        pass
    assert module._controller.cache_info().misses <= 2  # numpy and sklearn.ensemble at most
