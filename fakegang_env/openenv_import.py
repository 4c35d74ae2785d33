"""Import OpenEnv without its Gradio web UI unless the UI is asked for.

`openenv.core.env_server/__init__.py` (openenv 0.10) re-exports its web interface, which imports
Gradio: about 4 of the 6 seconds it takes to import our server, paid by every server process,
every worker process of `eval --concurrency` and the client. The web UI is only built when
`ENABLE_WEB_INTERFACE` is true, and OpenEnv imports it lazily at that point anyway; the eager
re-export is already wrapped in `except ModuleNotFoundError` (installs without Gradio). So,
unless that variable asks for the UI, a finder answers "not found" for that one module and
OpenEnv takes its own no-Gradio path. Nothing else of OpenEnv changes.
"""

from __future__ import annotations

import importlib.abc
import os
import sys

WEB_INTERFACE_MODULE = "openenv.core.env_server.web_interface"


def web_interface_wanted() -> bool:
    """OpenEnv's own test (http_server.create_app) of whether the web UI is enabled."""
    return os.getenv("ENABLE_WEB_INTERFACE", "false").lower() in ("true", "1", "yes")


class _SkipWebInterface(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):  # noqa: ANN001 (importlib's signature)
        if fullname == WEB_INTERFACE_MODULE and not web_interface_wanted():
            raise ModuleNotFoundError(
                f"{fullname} skipped (set ENABLE_WEB_INTERFACE=true for OpenEnv's web UI)",
                name=fullname,
            )
        return None


def install() -> None:
    """Put the finder first on `sys.meta_path` (once per process)."""
    if not any(isinstance(f, _SkipWebInterface) for f in sys.meta_path):
        sys.meta_path.insert(0, _SkipWebInterface())
