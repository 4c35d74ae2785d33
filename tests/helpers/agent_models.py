"""Chat models that misbehave on purpose, for the never-fatal LLM paths."""

from __future__ import annotations

import time
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class _Base(BaseChatModel):
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "test-" + type(self).__name__

    def bind_tools(self, tools: Any, **kwargs: Any) -> BaseChatModel:
        return self


class GarbageModel(_Base):
    """Answers prose that is no action at all."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        msg = AIMessage(content="I think the fox jumped over the moon. SUBMIT? maybe not.")
        return ChatResult(generations=[ChatGeneration(message=msg)])


class RaisingModel(_Base):
    """Fails like a broken provider."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        raise RuntimeError("provider exploded (test)")


class SlowModel(_Base):
    """Takes longer than any sensible timeout."""

    delay_s: float = 3.0

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        time.sleep(self.delay_s)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="{}"))])
