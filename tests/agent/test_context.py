"""Context is the one source of the run settings: one environment variable per field, one
default database path, and the model settings the factory and calls read."""

from __future__ import annotations

import pytest

from fakegang.graph.context import DEFAULT_DB_PATH, Context, env_var
from fakegang.runs.runner import TrainOptions
from fakegang.runs.studio_checkpointer import db_path
from fakegang.tools.models.model_settings import BEDROCK_MODEL_ENV, ModelSettings


def test_one_env_var_per_field(monkeypatch) -> None:
    assert env_var("db_path") == "FAKEGANG_DB_PATH"
    assert env_var("bedrock_model_id") == BEDROCK_MODEL_ENV == "FAKEGANG_BEDROCK_MODEL"
    monkeypatch.setenv("FAKEGANG_BEDROCK_MODEL", "qwen.other")
    monkeypatch.setenv("FAKEGANG_BEDROCK_MODEL_ID", "ignored")
    monkeypatch.setenv("FAKEGANG_TEMPERATURE", "0.9")
    monkeypatch.setenv("FAKEGANG_LEARN", "no")
    ctx = Context()
    assert ctx.bedrock_model_id == "qwen.other"
    assert ctx.temperature == 0.9
    assert ctx.learn is False
    assert Context(temperature=0.1).temperature == 0.1  # an explicit value wins


def test_default_db_path_is_shared(monkeypatch) -> None:
    monkeypatch.delenv("FAKEGANG_DB_PATH", raising=False)
    assert Context().db_path == TrainOptions().db == db_path() == DEFAULT_DB_PATH
    monkeypatch.setenv("FAKEGANG_DB_PATH", "/tmp/elsewhere.sqlite")
    assert db_path() == "/tmp/elsewhere.sqlite"


def test_model_settings_from_context(monkeypatch) -> None:
    monkeypatch.delenv("FAKEGANG_BEDROCK_MODEL", raising=False)
    ctx = Context(model="fake", temperature=0.2, model_seed=7, llm_timeout_s=5.0, llm_retries=1)
    assert ctx.model_settings() == ModelSettings(
        spec="fake",
        temperature=0.2,
        seed=7,
        timeout_s=5.0,
        max_retries=1,
        bedrock_model_id="qwen.qwen3-32b-v1:0",
        bedrock_region=None,
    )


def test_bad_env_value_fails_clearly(monkeypatch) -> None:
    monkeypatch.setenv("FAKEGANG_TEMPERATURE", "warm")
    with pytest.raises(ValueError, match="warm"):
        Context()
