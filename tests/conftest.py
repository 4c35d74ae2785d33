"""Shared test setup: no network, no AWS metadata probing, LangGraph offline."""

from __future__ import annotations

import os

os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")
os.environ.setdefault("LANGGRAPH_NO_VERSION_CHECK", "true")
os.environ.setdefault("LANGSMITH_TRACING", "false")

import pytest  # noqa: E402


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
