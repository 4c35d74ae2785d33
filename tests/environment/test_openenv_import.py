"""OpenEnv's Gradio web UI is imported only when `ENABLE_WEB_INTERFACE` asks for it
(fakegang_env/openenv_import.py), and the server works the same without it."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = (
    "import sys, fakegang_env.server.app as app; "
    "from openenv.core import env_server; "
    "print('gradio' in sys.modules, env_server.create_web_interface_app is None, "
    "app.build_app() is not None)"
)


def _probe(web: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ENABLE_WEB_INTERFACE"}
    if web is not None:
        env["ENABLE_WEB_INTERFACE"] = web
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_the_server_builds_without_importing_gradio() -> None:
    assert _probe(None) == "False True True"


def test_the_web_ui_is_still_there_when_asked_for() -> None:
    assert _probe("true") == "True False True"
