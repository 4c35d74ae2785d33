"""How to build and call a chat model, without importing any model library.

Kept apart from `chat_models` (which imports LangChain) so that `graph/context.py`, and through
it the CLI's argument parsing, can name the model settings and their environment variables
without paying for those imports.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fakegang.tools.models.model_kinds import find_kind

#: The one default of each model setting; `graph/context.py` (and through it the CLI) reads these.
DEFAULT_MODEL = "local"
DEFAULT_TEMPERATURE = 0.4
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RETRIES = 2
DEFAULT_BEDROCK_MODEL = "qwen.qwen3-32b-v1:0"
BEDROCK_MODEL_ENV = "FAKEGANG_BEDROCK_MODEL"
LLAMA_THREADS_ENV = "FAKEGANG_LLAMA_THREADS"


@dataclass(frozen=True)
class ModelSettings:
    """How to build and call a chat model (shared by the factory and `tools.llm`)."""

    spec: str = DEFAULT_MODEL  # a model kind's spec (tools/models/model_kinds.py)
    temperature: float = DEFAULT_TEMPERATURE
    seed: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S  # per call
    max_retries: int = (
        DEFAULT_RETRIES  # retries for throttling / 5xx / timeouts, with exponential backoff
    )
    bedrock_model_id: str = DEFAULT_BEDROCK_MODEL  # also overridable by env FAKEGANG_BEDROCK_MODEL
    bedrock_region: str | None = None  # else AWS_REGION / AWS_DEFAULT_REGION
    bedrock_endpoint_url: str | None = None  # tests point this at the stub
    retry_backoff_s: float = 0.5  # first backoff; doubles per retry (tests shrink it)

    @property
    def in_process(self) -> bool:
        """The model runs in this process (its timed-out call keeps the CPU until its deadline)."""
        kind = find_kind(self.spec)
        return kind is not None and kind.in_process


def resolve_bedrock_model_id(settings: ModelSettings) -> str:
    """An explicit non-default id wins, then $FAKEGANG_BEDROCK_MODEL, then the default."""
    if settings.bedrock_model_id != DEFAULT_BEDROCK_MODEL:
        return settings.bedrock_model_id
    return os.environ.get(BEDROCK_MODEL_ENV) or DEFAULT_BEDROCK_MODEL


def resolve_bedrock_region(settings: ModelSettings) -> str | None:
    return (
        settings.bedrock_region
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or None
    )
