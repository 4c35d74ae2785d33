"""Shared test setup: no network, no AWS metadata probing, LangGraph offline."""

from __future__ import annotations

import os

os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")
os.environ.setdefault("LANGGRAPH_NO_VERSION_CHECK", "true")
os.environ.setdefault("LANGSMITH_TRACING", "false")
# the adaptive operator's token key: one per test session, never the user's own
os.environ.setdefault(
    "FAKEGANG_OPERATOR_KEY_FILE",
    os.path.join(__import__("tempfile").mkdtemp(prefix="fakegang-test-key-"), "operator.key"),
)

import pytest  # noqa: E402


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Free the local model before interpreter exit (each xdist worker runs this too), so
    llama-cpp-python's finaliser does not print an ignored error at teardown."""
    import sys

    local_llm = sys.modules.get("fakegang.tools.models.local_llm")
    if local_llm is not None:
        local_llm.close_models()


@pytest.fixture(scope="session")
def env_url():
    """The real environment server (OpenEnv app under uvicorn) on a free 127.0.0.1 port."""
    from fakegang.graph.embedded_env import embedded_env_server

    with embedded_env_server() as url:
        yield url


@pytest.fixture(autouse=True)
def _fresh_agent_handles():
    """Each test gets fresh clients, memories and models (no state leaks between tests)."""
    yield
    from fakegang.graph import resources

    resources.reset_all()


@pytest.fixture(scope="session")
def uninterrupted_run(env_url, tmp_path_factory):
    """(db, log_dir, run_id) of a run played without interruption: the expected result of
    every pause/resume/fork scenario (test_pause_resume.py, test_replay_fork_prune.py)."""
    import io
    from pathlib import Path

    from runs_helpers import options

    from fakegang.runs.runner import train

    tmp = tmp_path_factory.mktemp("reference")
    opts = options(tmp, env_url)
    result = train(opts, out=io.StringIO())
    return Path(opts.db), Path(opts.log_dir), result["run_id"]
