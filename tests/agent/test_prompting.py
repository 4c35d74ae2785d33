"""The decision prompt's layout serves llama.cpp's KV-cache prefix reuse: whatever changes
between two LLM calls comes as late as possible, so each call evaluates only a short suffix."""

from __future__ import annotations

import os
import statistics

from fakegang.tools.memory.store import Reflection
from fakegang.tools.models.prompting import decision_messages, render_case
from fakegang.tools.rules.player import play_rules


def _inspect_step_prompts(task: str, seed: int) -> list[str]:
    """User prompts at the inspect steps of a rule-driven episode (where the LLM is asked)."""
    lessons = [Reflection(1, task, "t1", "Flag only when several signals agree.", False, -1.0)]
    prompts = []

    def collect(_episode, obs, _starting, proposal) -> None:
        if proposal.action.startswith("inspect"):
            case = render_case(obs, proposal.likelihood, proposal.frontier)
            prompts.append(decision_messages(lessons, None, case, proposal.choices)[1])

    play_rules(task, seed, collect)
    return prompts


def test_consecutive_prompts_share_their_prefix_well_into_the_case() -> None:
    into_case = []
    for seed in (0, 1):
        prompts = _inspect_step_prompts("hard", seed)
        assert len(prompts) > 10
        for a, b in zip(prompts, prompts[1:], strict=False):
            shared = len(os.path.commonprefix([a, b]))
            into_case.append(shared - b.index("CURRENT CASE"))
    # With the budget line first the shared prefix ended ~25 characters into the case; with the
    # slow-changing profile lines first it typically covers them (three lines, ~220 characters).
    assert statistics.median(into_case) > 150


def test_the_case_keeps_every_part_a_decider_needs() -> None:
    prompt = _inspect_step_prompts("medium", 0)[3]
    case = prompt[prompt.index("CURRENT CASE") :]
    lines = case.splitlines()
    assert lines[1] == "Unflagged inspected (P = ring evidence):"
    assert any(line.startswith("Uninspected: ") for line in lines)
    assert any(line.startswith("Last: ") for line in lines)
    budget = next(line for line in lines if "steps left" in line)
    assert budget.startswith("medium | steps left ") and "evasions" in budget
    assert lines[-1].startswith("Choose one action from: ")


def test_a_long_lesson_keeps_its_first_full_sentences() -> None:
    from fakegang.tools.models.prompting import LESSON_CHARS, render_lessons, shorten_lesson

    rambling = "Flag only when several signals agree. " * 20
    short = shorten_lesson(rambling)
    assert len(short) <= LESSON_CHARS and short.endswith("agree.")
    assert short.count("Flag only") == 7  # 7 sentences are 265 characters, 8 would be 303
    assert shorten_lesson("A shared IP alone is weak.") == "A shared IP alone is weak."
    one_long = "word " * 100
    assert shorten_lesson(one_long).endswith(" …") and len(shorten_lesson(one_long)) <= 302
    lesson = Reflection(1, "hard", "t1", rambling, False, -1.0)
    assert render_lessons([lesson]) == f"LESSONS FROM YOUR PAST CASES\n1. {short}\n\n"
