"""The model-kind registry is the one place a `--model` kind lives: a throwaway kind builds,
describes itself, says where it runs and gets its reflection budget through the registry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fakegang.tools.models.chat_models import (
    ModelConfigError,
    ModelSettings,
    describe_model,
    make_chat_model,
)
from fakegang.tools.models.llm import decide, reflect
from fakegang.tools.models.model_kinds import (
    SHIPPED_KINDS,
    ModelKind,
    extended_model_kinds,
    find_kind,
    kinds_help,
    model_kind,
)


class EchoModel(BaseChatModel):
    """Submits, giving its greeting as the reason, and records each call's keyword arguments."""

    greeting: str
    seen: list[dict[str, Any]] = []

    @property
    def _llm_type(self) -> str:
        return "test-echo"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.seen.append(kwargs)
        text = json.dumps({"action": "submit", "reason": self.greeting})
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


ECHO = ModelKind(
    name="echo",
    usage="echo:GREETING",
    matches=lambda spec: spec.startswith("echo:"),
    build=lambda settings: EchoModel(greeting=settings.spec.partition(":")[2], seen=[]),
    describe=lambda settings: f"echo {settings.spec.partition(':')[2]!r} (a test kind)",
    in_process=True,
    reflection_headroom=7,
)


def test_a_new_kind_builds_describes_and_runs_through_the_registry() -> None:
    settings = ModelSettings(spec="echo:hello", timeout_s=5.0, max_retries=0)
    with extended_model_kinds(ECHO):
        assert model_kind("echo:hello") is ECHO
        model = make_chat_model(settings)
        assert isinstance(model, EchoModel) and model.greeting == "hello"
        assert describe_model(settings) == "echo 'hello' (a test kind)"
        assert settings.in_process
        assert kinds_help().startswith("echo:GREETING | fake | ")  # --model's help lists it
        decision = decide(model, system="s", user="u", choices=["submit"], settings=settings)
        assert decision.ok and (decision.value, decision.reason) == ("submit", "hello")
        lesson = reflect(model, system="s", user="u", settings=settings, max_tokens=20)
        assert lesson.ok and model.seen[-1]["max_tokens"] == 20 + 7
    # without it, "echo:hello" is a LangChain provider spec again, and not a known provider
    assert find_kind("echo:hello").name == "provider" and not settings.in_process
    assert "echo" not in kinds_help()
    with pytest.raises(ModelConfigError, match="provider one of"):
        make_chat_model(settings)


def test_every_shipped_kind_takes_its_usage_and_describes_itself() -> None:
    specs = {"fake": "fake", "expert": "expert:0.9", "local": "local", "bedrock": "bedrock",
             "provider": "openai:gpt-4o-mini"}  # fmt: skip
    assert [k.name for k in SHIPPED_KINDS] == list(specs)
    for kind in SHIPPED_KINDS:
        settings = ModelSettings(spec=specs[kind.name], bedrock_region="eu-west-1")
        assert find_kind(settings.spec) is kind
        assert describe_model(settings)
        assert settings.in_process == (kind.name in ("fake", "expert", "local"))
    assert find_kind("gpt") is None
    with pytest.raises(ModelConfigError, match="use 'fake', 'expert:P', 'local'"):
        model_kind("gpt")


def test_llm_check_fails_loudly_when_the_prompt_builders_fail(monkeypatch, capsys) -> None:
    import argparse
    import io

    from fakegang.cli.llm import add_llm_commands
    from fakegang.tools.models import prompting

    def broken() -> None:
        raise KeyError("decide_system")

    monkeypatch.setattr(prompting, "sample_decision_messages", broken)
    parser = argparse.ArgumentParser()
    add_llm_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["llm-check", "--model", "fake"])
    assert args.func(args, out=io.StringIO()) == 2
    assert "prompt builders failed (KeyError: 'decide_system')" in capsys.readouterr().err
