"""Prompt rendering from the editable templates in prompts/.

The decision prompt is ordered for llama.cpp's KV-cache prefix reuse: the system prompt, lessons
and few-shot example (stable for a whole episode) come first, the per-step case last (itself
ordered slowest-changing line first), so each step only pays for its new suffix.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources

from fakegang.tools.memory.store import Reflection, Trajectory
from fakegang_env.schema import PlainObservation
from fakegang_env.trace_catalogue import trace_kinds

FEW_SHOT_ACTIONS = 14
REFLECT_ACTIONS = 20
CASE_PROFILES = 3
CASE_FRONTIER = 3
CASE_PIVOTS = 4


@cache
def load_prompt(name: str) -> str:
    return resources.files("fakegang.prompts").joinpath(f"{name}.md").read_text()


#: A lesson in a decision prompt keeps its first sentences within this many characters. The
#: reflection prompt asks for 2-3 sentences, but a small model rambles to its token cap, and every
#: token of a lesson is paid again on each cold call (docs/design-decisions.md, "Numbers behind
#: the constants").
LESSON_CHARS = 300


def shorten_lesson(text: str, limit: int = LESSON_CHARS) -> str:
    """`text` cut after its last full sentence within `limit` characters (or at a word, with an
    ellipsis, when even the first sentence is longer)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if end > 0:
        return head[: end + 1]
    return head.rsplit(" ", 1)[0] + " …"


def render_lessons(reflections: Sequence[Reflection]) -> str:
    if not reflections:
        return ""
    lines = ["LESSONS FROM YOUR PAST CASES"]
    lines += [f"{i}. {shorten_lesson(r.text)}" for i, r in enumerate(reflections, 1)]
    return "\n".join(lines) + "\n\n"


def render_insights(insights: Sequence[str]) -> str:
    """The task's active insights (tools/learning/insights.py), most important first."""
    if not insights:
        return ""
    lines = ["WHAT THIS OPERATOR DOES (learned from past debriefs)"]
    lines += [f"- {text}" for text in insights]
    return "\n".join(lines) + "\n\n"


def render_few_shot(traj: Trajectory | None) -> str:
    if traj is None:
        return ""
    shown = traj.action_log[:FEW_SHOT_ACTIONS]
    lines = [f"EXAMPLE SUCCESSFUL CASE (task={traj.task}, reward={traj.reward:+.2f})"]
    lines += [f"  {a}" for a in shown]
    if len(traj.action_log) > len(shown):
        lines.append(f"  … [{len(traj.action_log) - len(shown)} more steps] …")
    lines.append(f"→ {traj.final_message}")
    return "\n".join(lines) + "\n\n"


def render_case(
    obs: PlainObservation,
    likelihood: dict[str, float],
    frontier: dict[str, float],
) -> str:
    """A compact view of the case (a small local model pays for every token of it each step):
    the unflagged accounts with the strongest evidence, the likeliest frontier (whose P includes
    what the pivots that revealed an account say), the last pivots (trace@source=accounts sharing
    it), the last result, then budget and flags.

    Ordered by how often a line changes between two LLM calls, slowest first: the top
    unflagged profiles often stay the same for many steps, the frontier changes with every
    inspect, the budget line every step. llama.cpp reuses the prompt up to the first changed
    token, so this order cuts the tokens evaluated per call (docs/design-decisions.md, "Numbers
    behind the constants")."""
    profiles = {p.account_id: p for p in obs.visible_accounts}
    flagged = set(obs.flagged_ids)
    lines: list[str] = []
    ranked = sorted(
        ((a, p) for a, p in likelihood.items() if a not in flagged), key=lambda kv: -kv[1]
    )[:CASE_PROFILES]
    if ranked:
        lines.append("Unflagged inspected (P = ring evidence):")
    for a, p in ranked:
        pr = profiles[a]
        lines.append(
            f"{a} P={p:.2f} age={pr.account_age_days}d hour={pr.avg_post_hour:.0f} "
            f"photo={pr.photo_reuse_score:.1f} bio={pr.bio_template_score:.1f} "
            f"comment={pr.comment_repeat_score:.1f} ipshare={pr.shared_ip_count}"
        )
    if frontier:
        top = sorted(frontier.items(), key=lambda kv: -kv[1])[:CASE_FRONTIER]
        lines.append("Uninspected: " + " ".join(f"{x} P={q:.2f}" for x, q in top))
    if obs.pivots:
        lines.append(
            "Pivots: "
            + " ".join(f"{p.trace}@{p.account_id}={p.total}" for p in obs.pivots[-CASE_PIVOTS:])
        )
    lines.append(f"Last: {obs.message[:120]}")
    lines.append(
        f"{obs.task} | steps left {obs.steps_remaining}/{obs.max_steps} | "
        f"flagged {len(flagged)} | inspected {len(obs.inspected_ids)} | "
        f"evasions {obs.evasion_count}"
    )
    return "\n".join(lines)


def decision_system() -> str:
    """The decision system prompt, its `{traces}` list rendered from the trace catalogue."""
    traces = ", ".join(f"{k.name} ({k.prompt_note})" for k in trace_kinds())
    return load_prompt("decide_system").replace("{traces}", traces)


def decision_messages(
    reflections: Sequence[Reflection],
    few_shot: Trajectory | None,
    case: str,
    choices: Sequence[str],
    insights: Sequence[str] = (),
) -> tuple[str, str]:
    user = load_prompt("decide_user").format(
        lessons=render_insights(insights) + render_lessons(reflections),
        few_shot=render_few_shot(few_shot),
        case=case,
        choices=" | ".join(choices),
    )
    return decision_system(), user


def reflection_messages(
    *,
    won: bool,
    episode: int,
    task: str,
    final_message: str,
    steps_used: int,
    max_steps: int,
    action_log: Sequence[str],
    modes: dict[str, int],
) -> tuple[str, str]:
    shown = list(action_log[:REFLECT_ACTIONS])
    actions = "\n".join(f"{i}. {a}" for i, a in enumerate(shown, 1))
    if len(action_log) > len(shown):
        actions += f"\n… [{len(action_log) - len(shown)} more steps]"
    template = load_prompt("reflect_success" if won else "reflect_failure")
    user = template.format(
        episode=episode,
        task=task,
        final_message=final_message,
        steps_used=steps_used,
        max_steps=max_steps,
        n_flags=sum(1 for a in action_log if a.startswith("FLAG")),
        mode_summary=", ".join(f"{k}={v}" for k, v in modes.items()),
        n_shown=len(shown),
        actions=actions or "(none)",
    )
    return load_prompt("reflect_system"), user


def sample_decision_messages() -> tuple[str, str, list[str]]:
    """A fixed, realistic decision prompt (easy seed 0 after a few rule steps) for `llm-check`."""
    from fakegang.tools.rules.actions import parse_action
    from fakegang.tools.rules.engine import propose
    from fakegang_env.engine import Episode

    episode = Episode("easy", 0)
    obs = PlainObservation(**episode.observation())
    starting = list(obs.visible_account_ids)
    for _ in range(6):
        proposal = propose(obs, starting)
        action_type, account_id = parse_action(proposal.action)
        if action_type == "submit":
            break
        obs = PlainObservation(**episode.step(action_type, account_id))
    proposal = propose(obs, starting)
    case = render_case(obs, proposal.likelihood, proposal.frontier)
    system, user = decision_messages([], None, case, proposal.choices)
    return system, user, proposal.choices


def sample_reflection_messages() -> tuple[str, str]:
    """A fixed reflection prompt for `llm-check`."""
    return reflection_messages(
        won=False,
        episode=7,
        task="medium",
        final_message="[LOSS] TP=6 FP=3 FN=4 Recall=0.60 Precision=0.67 Episode reward=-1.42",
        steps_used=50,
        max_steps=50,
        action_log=["INSPECT u_1a2b3c", "FLAG u_1a2b3c", "INSPECT u_44aa01", "FLAG u_44aa01"],
        modes={"agree": 1, "rule_override": 3, "llm": 0},
    )
