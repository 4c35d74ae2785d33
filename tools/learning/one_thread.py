"""Numerical work on one native thread, without looking the thread pools up on every call.

`threadpoolctl.threadpool_limits` finds the process's BLAS and OpenMP libraries anew each time it
is entered (it walks every loaded shared object); around the learner's scoring, which runs once
per step, that lookup cost more than the scoring itself. A `ThreadpoolController` built once, as
threadpoolctl documents for repeated limits, does the same limiting at the cost of setting the
thread counts. One thread: the problems are small, and idle pool threads spin against the other
workers on the same cores (docs/design-decisions.md, "Numbers behind the constants").
"""

from __future__ import annotations

import functools
import importlib

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller(module: str) -> ThreadpoolController:
    importlib.import_module(module)  # its native libraries are loaded before they are looked up
    return ThreadpoolController()


def one_thread(module: str, user_api: str | None = None):
    """A context manager limiting the thread pools loaded once `module` is (`user_api`: "blas",
    "openmp" or None for both) to one thread while it is entered. Pools a library loads later
    (llama.cpp's own OpenMP runtime) are left alone: they are not the learner's."""
    return _controller(module).limit(limits=1, user_api=user_api)
