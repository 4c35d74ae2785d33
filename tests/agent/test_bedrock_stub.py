"""`--model bedrock` (ChatBedrockConverse) against a local Converse stub: Qwen caveats, retries,
failures, configuration errors.  Offline: 127.0.0.1 only, fake static credentials."""

from __future__ import annotations

import pytest
from bedrock_stub import (
    BedrockStub,
    Error,
    Slow,
    reasoning_answer,
    text_answer,
    tool_answer,
)

from fakegang.tools.models.chat_models import (
    DEFAULT_BEDROCK_MODEL,
    ModelConfigError,
    ModelSettings,
    describe_model,
    make_chat_model,
)
from fakegang.tools.models.llm import decide, reflect
from fakegang.tools.models.model_kinds import REASONING_HEADROOM_TOKENS

CHOICES = ["inspect u_1a2b3c", "flag u_1a2b3c", "investigate_network u_44aa01", "submit"]
AWS_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "FAKEGANG_BEDROCK_MODEL",
)


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """No real AWS configuration is visible; fake static keys; never probe instance metadata."""
    for name in AWS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    return monkeypatch


def _settings(stub: BedrockStub, **kw) -> ModelSettings:
    base = dict(
        spec="bedrock",
        bedrock_endpoint_url=stub.url,
        timeout_s=5.0,
        max_retries=2,
        retry_backoff_s=0.01,
    )
    base.update(kw)
    return ModelSettings(**base)


def _decide(stub: BedrockStub, **kw):
    settings = _settings(stub, **kw)
    model = make_chat_model(settings)
    return decide(model, system="sys", user="case", choices=CHOICES, settings=settings)


def test_structured_decision_success(aws_env):
    answer = tool_answer(
        "Decision", {"action": "flag u_1a2b3c", "reason": "lockstep"}, tokens_in=812
    )
    with BedrockStub([answer]) as stub:
        result = _decide(stub)
    assert result.ok and result.value == "flag u_1a2b3c" and result.reason == "lockstep"
    assert (result.tokens_in, result.tokens_out, result.tokens_estimated) == (812, 20, False)
    (request,) = stub.requests
    assert request["model_id"] == DEFAULT_BEDROCK_MODEL
    body = request["body"]
    assert body["system"] == [{"text": "sys"}]
    assert body["inferenceConfig"]["temperature"] == 0.4
    schema = body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]
    assert schema["properties"]["action"]["enum"] == CHOICES
    assert "toolChoice" not in body["toolConfig"]  # Qwen: no forced tool choice


def test_none_structured_output_in_prose_is_not_guessed(aws_env):
    # Qwen answered in prose, so structured output is None; a choice mentioned in prose is not
    # taken for the answer (it may be negated or just reasoning): the rule action will stand
    with BedrockStub([text_answer("After checking, I would flag u_1a2b3c.")]) as stub:
        result = _decide(stub)
    assert not result.ok and "unparseable" in result.error


def test_none_structured_output_with_json_in_prose(aws_env):
    prose = 'Here is my answer: {"action": "submit", "reason": "nothing left"} Thanks.'
    with BedrockStub([text_answer(prose)]) as stub:
        result = _decide(stub)
    assert result.ok and result.value == "submit" and result.reason == "nothing left"


def test_none_structured_output_unparseable_is_not_ok(aws_env):
    with BedrockStub([text_answer("The ring is probably large. Hard to say.")]) as stub:
        result = _decide(stub)
    assert not result.ok and result.value is None
    assert result.error.startswith("unparseable output") and "Hard to say" in result.raw


def test_tool_answer_outside_the_choices_is_not_ok(aws_env):
    answer = tool_answer("Decision", {"action": "flag u_zzzzzz", "reason": "?"})
    with BedrockStub([answer]) as stub:
        result = _decide(stub)
    assert not result.ok and "unparseable" in result.error


def test_reasoning_content_is_not_taken_for_the_answer(aws_env):
    answer = reasoning_answer(
        "Maybe submit? Or flag u_1a2b3c?", '{"action": "inspect u_1a2b3c", "reason": "look first"}'
    )
    with BedrockStub([answer]) as stub:
        result = _decide(stub)
    assert result.ok and result.value == "inspect u_1a2b3c"
    assert "Maybe submit" not in result.raw


def test_reflection_keeps_only_the_answer_text(aws_env):
    answer = reasoning_answer("secret thoughts", "<think>more</think>Combine lockstep and graph.")
    with BedrockStub([answer]) as stub:
        settings = _settings(stub)
        result = reflect(make_chat_model(settings), system="s", user="u", settings=settings)
    assert result.ok and result.value == "Combine lockstep and graph."
    max_tokens = stub.requests[0]["body"]["inferenceConfig"]["maxTokens"]
    assert max_tokens == 120 + REASONING_HEADROOM_TOKENS


def test_throttling_then_success(aws_env):
    ok = tool_answer("Decision", {"action": "submit", "reason": "done"})
    with BedrockStub([Error(429, "ThrottlingException", "Too many requests"), ok]) as stub:
        result = _decide(stub)
    assert result.ok and result.value == "submit" and result.attempts == 2
    assert len(stub.requests) == 2


def test_persistent_throttling_fails_after_the_retries(aws_env):
    with BedrockStub([Error(429, "ThrottlingException", "Too many requests")]) as stub:
        result = _decide(stub)
    assert not result.ok and result.value is None
    assert result.error == "ThrottlingException x3" and result.attempts == 3
    assert len(stub.requests) == 3  # botocore itself does not retry: we own the retries


def test_persistent_server_error_fails(aws_env):
    with BedrockStub([Error(500, "InternalServerException", "oops")]) as stub:
        result = _decide(stub, max_retries=1)
    assert not result.ok and result.error == "InternalServerException x2"


def test_validation_error_is_not_retried(aws_env):
    with BedrockStub([Error(400, "ValidationException", "model id not found")]) as stub:
        result = _decide(stub)
    assert not result.ok and result.attempts == 1 and len(stub.requests) == 1
    assert "ValidationException" in result.error and "model id not found" in result.error


def test_read_timeout_is_retried_then_reported(aws_env):
    slow = Slow(2.0, tool_answer("Decision", {"action": "submit", "reason": "late"}))
    with BedrockStub([slow]) as stub:
        result = _decide(stub, timeout_s=0.4, max_retries=1)
    assert not result.ok and result.attempts == 2
    assert "timeout" in result.error.lower()
    assert result.latency_s < 3.0


def test_model_id_from_env_and_from_settings(aws_env):
    answer = tool_answer("Decision", {"action": "submit", "reason": "r"})
    aws_env.setenv("FAKEGANG_BEDROCK_MODEL", "qwen.qwen3-235b-a22b-2507-v1:0")
    with BedrockStub([answer]) as stub:
        assert _decide(stub).ok
        assert _decide(stub, bedrock_model_id="us.qwen.qwen3-32b-v1:0").ok
    assert [r["model_id"] for r in stub.requests] == [
        "qwen.qwen3-235b-a22b-2507-v1:0",
        "us.qwen.qwen3-32b-v1:0",
    ]


def test_describe_bedrock(aws_env):
    label = describe_model(ModelSettings(spec="bedrock", bedrock_region="eu-west-1"))
    assert label == f"bedrock {DEFAULT_BEDROCK_MODEL} (eu-west-1)"


def test_missing_region_is_a_config_error(aws_env):
    aws_env.delenv("AWS_REGION")
    with pytest.raises(ModelConfigError, match="AWS_REGION"):
        make_chat_model(ModelSettings(spec="bedrock"))


def test_missing_credentials_is_a_config_error(aws_env):
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ModelConfigError, match="AWS_ACCESS_KEY_ID"):
        make_chat_model(ModelSettings(spec="bedrock"))
