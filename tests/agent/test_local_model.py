"""The embedded local model (SmolLM2-135M via llama.cpp): a real decision and a real reflection.

Runs in the default suite whenever llama-cpp-python is importable (about 10-20 s on 2 cores);
skipped, with the reason, when it is not installed.
"""

from __future__ import annotations

import importlib.util

import pytest

from fakegang.tools.models.chat_models import ModelSettings, make_chat_model

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (pip install 'fakegang[local]'; it builds "
        "from source in about 10-15 minutes)",
    ),
]

SYSTEM = (
    "You are a trust-and-safety investigator hunting a ring of coordinated fake accounts. "
    "Each turn choose exactly ONE action from the list. "
    'Answer with JSON: {"action": "<one action from the list>", "reason": "<one short sentence>"}.'
)
STABLE = (
    "LESSONS FROM YOUR PAST CASES\n"
    "1. Flag only when lockstep creation dates and a shared bio template agree.\n"
    "2. A shared IP alone is weak evidence.\n\n"
    "CURRENT CASE\n"
)
CASES = [
    (
        "u_9cc38e P=0.71 age=12d hour=3.1 photo=0.80 bio=0.74 mutual=0.50\n"
        "u_350156 P=0.04 age=910d hour=20.9 photo=0.07 bio=0.20 mutual=0.14",
        ["flag u_9cc38e", "flag u_350156", "inspect u_ebf729", "submit"],
    ),
    (
        "u_ebf729 P=0.66 age=14d hour=3.0 photo=0.75 bio=0.70 mutual=0.45\n"
        "u_26735c P=0.03 age=1200d hour=18.2 photo=0.02 bio=0.10 mutual=0.00",
        ["flag u_ebf729", "flag u_26735c", "inspect u_31beec", "submit"],
    ),
]
SETTINGS = ModelSettings(spec="local", timeout_s=120.0, max_retries=0)


def _user(case: str, choices: list[str]) -> str:
    return f"{STABLE}{case}\n\nChoose one action from: {' | '.join(choices)}"


@pytest.fixture(scope="module")
def model():
    return make_chat_model(SETTINGS)


def test_gguf_is_found_in_the_installed_package():
    from fakegang.tools.models.local_llm import find_smollm2_gguf

    path = find_smollm2_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "smollm2" in path.name.lower()


def test_real_decision_and_reflection(model):
    from fakegang.tools.models.llm import decide, reflect

    case, choices = CASES[0]
    decision = decide(
        model, system=SYSTEM, user=_user(case, choices), choices=choices, settings=SETTINGS
    )
    assert decision.ok, decision.error
    assert decision.value in choices
    assert decision.tokens_in > 100 and decision.tokens_out > 0 and not decision.tokens_estimated
    assert decision.prompt_tokens_reused is not None  # recorded per step by llm_decide

    reflection = reflect(
        model,
        system="You review a finished investigation and write a 2-3 sentence lesson.",
        user="Case 7 (easy) was LOST. Steps used: 30 of 30. Flags: 1. "
        "What should the investigator do differently next time?",
        settings=SETTINGS,
        max_tokens=60,
    )
    assert reflection.ok, reflection.error
    assert reflection.value.strip()
    assert 0 < reflection.tokens_out <= 60


def test_the_stable_prompt_prefix_is_reused(model):
    from fakegang.tools.models.llm_parse import decision_schema

    outputs = []
    for case, choices in CASES:
        structured = model.with_structured_output(decision_schema(tuple(choices)), include_raw=True)
        out = structured.invoke([("system", SYSTEM), ("human", _user(case, choices))])
        assert out["parsed"] is not None and out["parsed"].action in choices
        outputs.append(out["raw"])
    second = outputs[1].response_metadata
    # the system prompt and the lessons (> 80 tokens) come from the KV cache the second time
    assert second["prompt_tokens_reused"] > 80
    assert second["prompt_tokens_reused"] < outputs[1].usage_metadata["input_tokens"]


def test_local_deadline_stops_a_call_and_decide_reports_it():
    from fakegang.tools.models.llm import decide
    from fakegang.tools.models.local_llm import LocalLlamaChatModel, find_smollm2_gguf

    tight = ModelSettings(spec="local", timeout_s=30.0, max_retries=0)
    model = LocalLlamaChatModel(model_path=str(find_smollm2_gguf()), max_call_s=0.001)
    case, choices = CASES[1]
    result = decide(
        model, system=SYSTEM + " (v2)", user=_user(case, choices), choices=choices, settings=tight
    )
    assert not result.ok
    assert "deadline" in result.error


def test_close_models_frees_the_model_and_a_later_call_loads_it_again(model):
    """Closed while the interpreter is whole (the test session's end does it), not by
    `Llama.__del__` at exit; a call afterwards loads the model again."""
    from fakegang.tools.models import local_llm

    case, choices = CASES[0]
    model.invoke([("system", SYSTEM), ("human", _user(case, choices))])
    loaded = list(local_llm._LLAMAS.values())
    assert loaded
    assert local_llm.close_models()
    assert not local_llm._LLAMAS
    assert all(llama._ctx.ctx is None and llama._model.model is None for llama in loaded)
    again = model.invoke([("system", SYSTEM), ("human", _user(case, choices))])
    assert again.content
    assert local_llm._LLAMAS


def test_close_models_leaves_a_model_that_is_still_generating():
    from fakegang.tools.models import local_llm

    local_llm._CALL_LOCK.acquire()  # what a call in flight holds
    try:
        assert local_llm.close_models(wait_s=0.05) is False
    finally:
        local_llm._CALL_LOCK.release()
