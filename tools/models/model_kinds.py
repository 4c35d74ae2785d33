"""The registry of model kinds: what `--model SPEC` can name, and everything that depends on it.

A kind says which specs it takes (`fake`, `expert:P`, `local`, `bedrock`, `provider:model`), how
to build and describe its chat model, whether that model runs in this process (a timed-out call
keeps the CPU until its own deadline, so it is not retried: tools/models/llm_retry.py), and its
reflection budget (tools/models/llm.py). The factory (`make_chat_model`, `describe_model`),
`ModelSettings.in_process` and the reflection call look the kind up here and nowhere else; adding
a kind is one entry in `SHIPPED_KINDS` (docs/how-to/extend-model-kind.md).

The shipped kinds' builders are imported at their first call (`_lazy`), so naming a model (the
CLI's argument parsing, `graph/context.py`) imports no model library.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

    from fakegang.tools.models.model_settings import ModelSettings

__all__ = [
    "FAKE_LABEL",
    "SHIPPED_KINDS",
    "ModelConfigError",
    "ModelKind",
    "extended_model_kinds",
    "find_kind",
    "model_kind",
]

FAKE_LABEL = "fake (deterministic stand-in, not an LLM)"


class ModelConfigError(RuntimeError):
    """The requested model cannot be built here; the message says what is missing."""


@dataclass(frozen=True)
class ModelKind:
    """One kind of chat model `--model` can name."""

    name: str
    usage: str  # the spec as help and errors show it: "fake", "expert:P", "provider:model"
    matches: Callable[[str], bool]  # does this (stripped) spec name this kind?
    build: Callable[[ModelSettings], BaseChatModel]  # raises ModelConfigError when unusable
    describe: Callable[[ModelSettings], str]  # the label of logs and run headers
    in_process: bool  # the model runs in this process
    # Reflection budget: None = called as built, its text truncated to the cap; a number = bound
    # to the cap plus that many tokens (our models honour max_tokens exactly: 0; reasoning
    # models think first and need headroom).
    reflection_headroom: int | None = None
    hint: str = ""  # a few words `--model`'s help adds after the usage, e.g. "SmolLM2 on the CPU"


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """`fakegang.tools.models.<module>.<name>`, imported at its first call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        target = importlib.import_module(f"fakegang.tools.models.{module}")
        return getattr(target, name)(*args, **kwargs)

    call.__qualname__ = f"{module}.{name}"
    return call


def _named(name: str) -> Callable[[str], bool]:
    return lambda spec: spec == name


def _prefixed(prefix: str) -> Callable[[str], bool]:
    return lambda spec: spec.startswith(prefix)


#: Reasoning models (Qwen3 on Bedrock) think before answering; a reflection capped at 120 tokens
#: would be all thinking. They get this much extra budget and the visible text is truncated.
REASONING_HEADROOM_TOKENS = 512

SHIPPED_KINDS: tuple[ModelKind, ...] = (
    ModelKind(
        name="fake",
        usage="fake",
        matches=_named("fake"),
        build=_lazy("chat_models", "make_fake"),
        describe=lambda settings: FAKE_LABEL,
        in_process=True,
        reflection_headroom=0,
    ),
    ModelKind(
        name="expert",
        usage="expert:P",
        matches=_prefixed("expert:"),
        build=_lazy("chat_models", "make_expert"),
        describe=lambda settings: (
            f"{settings.spec.strip()} (simulated expert reading the "
            "embedded env's truth; a test double)"
        ),
        in_process=True,
    ),
    ModelKind(
        name="local",
        usage="local",
        hint="SmolLM2 on the CPU",
        matches=_named("local"),
        build=_lazy("chat_models", "make_local"),
        describe=lambda settings: (
            "local SmolLM2-135M-Instruct Q4_1 (llama.cpp in-process, JSON-schema constrained)"
        ),
        in_process=True,
        reflection_headroom=0,
    ),
    ModelKind(
        name="bedrock",
        usage="bedrock",
        matches=_named("bedrock"),
        build=_lazy("chat_models", "make_bedrock"),
        describe=_lazy("chat_models", "describe_bedrock"),
        in_process=False,
        reflection_headroom=REASONING_HEADROOM_TOKENS,
    ),
    ModelKind(  # last: any other "provider:model" goes to LangChain's init_chat_model
        name="provider",
        usage="provider:model",
        matches=lambda spec: ":" in spec,
        build=_lazy("chat_models", "make_provider"),
        describe=lambda settings: f"{settings.spec.strip()} (LangChain init_chat_model)",
        in_process=False,
    ),
)

_active: tuple[ModelKind, ...] = SHIPPED_KINDS


def model_kinds() -> tuple[ModelKind, ...]:
    """The kinds in force, in the order a spec is matched against them."""
    return _active


def kinds_help() -> str:
    """The specs `--model` takes, in matching order, as its help lists them."""
    return " | ".join(f"{k.usage} ({k.hint})" if k.hint else k.usage for k in _active)


def find_kind(spec: str) -> ModelKind | None:
    """The first kind that takes `spec`, or None."""
    spec = spec.strip()
    return next((k for k in _active if k.matches(spec)), None)


def model_kind(spec: str) -> ModelKind:
    """The kind that takes `spec`; ModelConfigError listing the usable specs otherwise."""
    kind = find_kind(spec)
    if kind is None:
        usages = [f"'{k.usage}'" for k in _active]
        raise ModelConfigError(
            f"unknown model spec {spec!r}: use {', '.join(usages[:-1])} or {usages[-1]} "
            "(for example 'ollama:qwen3:8b' or 'openai:gpt-4o-mini')"
        )
    return kind


@contextmanager
def extended_model_kinds(*kinds: ModelKind) -> Iterator[tuple[ModelKind, ...]]:
    """`kinds` first, then the shipped ones, until the block ends (tests of a new kind)."""
    global _active
    before = _active
    _active = (*kinds, *before)
    try:
        yield _active
    finally:
        _active = before
