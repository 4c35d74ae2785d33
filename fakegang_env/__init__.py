"""fakegang_env: an OpenEnv environment in which an investigator uncovers a ring of fake accounts.

The OpenEnv classes are exported lazily: importing `openenv.core` takes seconds, and code that
only needs the task catalogue or the wire schema should not pay for it. OpenEnv's Gradio web UI
is not imported unless `ENABLE_WEB_INTERFACE` asks for it (fakegang_env/openenv_import.py).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from fakegang_env import openenv_import

openenv_import.install()

_LAZY = {
    "FakeGangAction": "fakegang_env.models",
    "FakeGangObservation": "fakegang_env.models",
    "FakeGangState": "fakegang_env.models",
    "FakeGangEnv": "fakegang_env.client",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fakegang_env' has no attribute {name!r}")
