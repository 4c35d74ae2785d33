"""The deterministic stand-in (`--model fake`): valid, reproducible decisions and fact-based
reflections."""

from __future__ import annotations

from fakegang.tools.models.chat_models import (
    FAKE_LABEL,
    ModelSettings,
    describe_model,
    make_chat_model,
)
from fakegang.tools.models.fake_llm import FakeChatModel, stand_in_reflection
from fakegang.tools.models.llm import decide, reflect

SYSTEM = "You are an investigator. Answer with JSON."
CHOICES = ["inspect u_1a2b3c", "flag u_1a2b3c", "investigate_network u_44aa01", "submit"]
REFLECTION_PROMPT = (
    "Case 7 (medium) was LOST.\n"
    "Result: [LOSS] TP=6 FP=3 FN=4 Recall=0.60 Precision=0.67 Episode reward=-1.42\n"
    "Steps used: 50 of 50. Flags: 2.\n"
    "What should the investigator do differently next time?"
)


def _decide(seed: int, user: str, choices: list[str] = CHOICES):
    settings = ModelSettings(spec="fake", seed=seed)
    return decide(
        make_chat_model(settings), system=SYSTEM, user=user, choices=choices, settings=settings
    )


def test_fake_factory_and_label():
    settings = ModelSettings(spec="fake", seed=3)
    model = make_chat_model(settings)
    assert isinstance(model, FakeChatModel) and model.seed == 3
    assert describe_model(settings) == FAKE_LABEL == "fake (deterministic stand-in, not an LLM)"


def test_fake_decision_is_valid_and_deterministic():
    first = _decide(0, "case A: u_1a2b3c posts at 3am")
    again = _decide(0, "case A: u_1a2b3c posts at 3am")
    assert first.ok and first.error is None
    assert (first.value, first.reason) == ("flag u_1a2b3c", "[stand-in] hash pick among 4")
    assert (first.value, first.reason) == (again.value, again.reason)
    assert first.attempts == 1
    assert first.latency_s > 0  # measured around the call (0.0 would mean never timed)
    # the stand-in reports no usage: both counts are estimated from the text
    assert first.tokens_estimated and (first.tokens_in, first.tokens_out) == (17, 17)


def test_fake_decision_depends_on_seed_and_prompt():
    by_seed = {_decide(seed, "case B").value for seed in range(12)}
    by_prompt = {_decide(0, f"case {i}").value for i in range(12)}
    # a hash of seed and prompt: both spread over the menu (here never on `submit`)
    assert by_seed == by_prompt == set(CHOICES) - {"submit"}


def test_fake_never_submits_unless_it_is_the_only_choice():
    picks = {_decide(seed, "case C").value for seed in range(30)}
    assert "submit" not in picks
    only = _decide(0, "case D", ["submit"])
    assert only.ok and only.value == "submit"


def test_fake_reflection_quotes_the_episode_facts():
    settings = ModelSettings(spec="fake")
    result = reflect(
        make_chat_model(settings), system=SYSTEM, user=REFLECTION_PROMPT, settings=settings
    )
    assert result.ok and result.value is not None
    assert result.value.startswith("[stand-in]")
    assert "LOSS" in result.value
    assert "50 of 50" in result.value
    assert "[LOSS] TP=6 FP=3 FN=4" in result.value


def test_fake_reflection_without_facts_invents_nothing():
    text = stand_in_reflection("Write a lesson.")
    assert text.startswith("[stand-in] Episode outcome not stated.")
    assert "Steps used" not in text and "Terminal message" not in text


def test_fake_reflection_respects_the_token_cap():
    settings = ModelSettings(spec="fake")
    result = reflect(
        make_chat_model(settings),
        system=SYSTEM,
        user=REFLECTION_PROMPT,
        settings=settings,
        max_tokens=5,
    )
    assert result.ok and len(result.value.split()) <= 5
