"""What the graph learns between episodes, and what an episode pins when it starts.

`pinned_at_start` is read once per episode by `observe` and written into the state: the weights
version in force, α, and the LLM's expected gain, exploration rate and stake. Every later decision
of the episode uses only those, so resume, replay and fork reproduce them even if other episodes
have learned in between.

`learn_from_debrief` runs in `reflect`: labelled experience → refit → new weights version;
counterfactual credit of the LLM's disagreements → α for the next episode; insights.
Each part is keyed by the episode's thread id, so a re-run after a kill rewrites the same rows.
"""

from __future__ import annotations

from typing import Any

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.tools.learning import credit as credit_rules
from fakegang.tools.learning import credit_store, experience, insights, trace_yields
from fakegang.tools.learning.alpha import ALPHA_FLOOR, compute_alpha
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules.engine import load_weights
from fakegang_env.schema import PlainObservation
from fakegang_env.tasks import get_task


def pinned_at_start(ctx: Context, memory: Memory, task: str) -> dict[str, Any]:
    """State fields fixed for the whole episode (see the module docstring)."""
    with memory.locked():
        return _pinned(ctx, memory, task)


def _pinned(ctx: Context, memory: Memory, task: str) -> dict[str, Any]:
    latest = experience.latest_version(memory, task) if ctx.refit else None
    version = latest.version if latest is not None else 0
    yields = (
        trace_yields.estimate(memory, task, latest.tactics)
        if latest is not None
        else trace_yields.prior(task, None)
    )
    credit = credit_store.task_credit(memory, task)
    if ctx.alpha_rule == "seed":
        stored = memory.alpha(task)
        alpha = stored if stored is not None else ALPHA_FLOOR
        # the seed asks whenever the rule is below α, never to explore, without a stake
        gain, rate, report, stake = 1.0, 0.0, 1.0, None
    else:
        alpha = credit_rules.credit_alpha(task, credit)
        gain = credit_rules.expected_gain(credit)
        if ctx.learn:
            every_task = credit_store.task_credit(memory, None)
            rate = credit_rules.explore_rate(credit, every_task)
            report = credit_rules.report_weight(every_task)
        else:  # exploring only pays when the answer is judged: never in evaluation (read-only)
            rate, report = 0.0, 1.0
        stake = credit_rules.stake(credit)
    return {
        "weights_version": version,
        "trace_yields": yields,
        "alpha": alpha,
        "llm_gain": round(gain, 4),
        "explore_rate": rate,
        "explore_report_weight": report,
        "llm_stake": stake,
    }


def episode_weights(ctx: Context, task: str, version: int | None) -> dict[str, Any] | None:
    """The rule weights of the pinned version (None: the shipped ones)."""
    if not version:
        return None
    return experience.get_version(resources.memory(ctx), task, version).as_rule_weights()


def learn_from_debrief(
    ctx: Context,
    state: dict[str, Any],
    obs: PlainObservation,
    steps: list[dict],
    *,
    won: bool,
) -> list[str]:
    """Everything learned from one finished episode; returns status fragments for the log."""
    memory = resources.memory(ctx)
    task = get_task(state["task"])
    thread_id = state["thread_id"]
    ring = set(obs.ring_ids or [])
    status: list[str] = []
    if not ring:
        status.append("no debrief (ring_ids): weights and credit unchanged")
    else:
        if ctx.refit:
            pinned = episode_weights(ctx, task.name, state.get("weights_version"))
            rows = experience.labelled_rows(
                obs, state["starting_ids"], ring, pinned or load_weights()
            )
            errors = experience.pinned_errors(pinned or load_weights(), rows)
            experience.store_experience(memory, task.name, thread_id, rows)
            version = experience.refit_task(memory, task.name, thread_id, errors)
            status.append(f"weights v{version.version} from {version.n_episodes} debriefs")
            claims = insights.weight_claims(
                load_weights(), {"profile": version.profile, "frontier": version.frontier}
            )
            claims.update(insights.learner_claims(version.learner))
            judged_pivots = trace_yields.judge_pivots(obs.pivots, ring)
            yields = trace_yields.record(
                memory, task.name, thread_id, judged_pivots, version.tactics
            )
            claims.update(trace_yields.crowd_claims(task.name, yields))
            status.append("yields " + " ".join(f"{t}={y:.1f}" for t, y in yields.items()))
        else:
            claims = {}
        claims.update(insights.outcome_claims(obs.fn, obs.fp, won))
        ops = insights.update(memory, task.name, thread_id, claims)
        status.append("insights " + " ".join(f"{k}={v}" for k, v in ops.items() if v))
        judged = credit_rules.judge_steps(
            steps, ring, task.win_recall, won=bool(won), pivots=obs.pivots
        )
        tally = state["tally"]
        credit_store.record(
            memory,
            task.name,
            thread_id,
            judged,
            llm_calls=tally["llm_calls"],
            actions=len(steps),
            alpha=state["alpha"],
        )
        status.append(f"credit +{judged.better}/-{judged.worse}")
    if ctx.alpha_rule == "seed":
        n_refl = memory.reflection_count(task.name)
        wr = memory.recent_win_rate(task.name)
        alpha = compute_alpha(task.name, wr, n_refl)
        memory.save_alpha(task.name, alpha, wr, n_refl)
    else:
        credit = credit_store.task_credit(memory, task.name)
        alpha = credit_rules.credit_alpha(task.name, credit)
        memory.save_alpha(
            task.name, alpha, memory.recent_win_rate(task.name), memory.reflection_count(task.name)
        )
    status.append(f"α→{alpha:.2f}")
    return status
