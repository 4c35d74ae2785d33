"""The episode start: reset the environment, pin what the episode plays with, record it running.

Not a node of its own: `observe` runs it on its first entry (an episode without
`env_episode_id`), so the graph, the environment's step count and every stored figure stay what
they were (docs/design-decisions.md, "The episode start is a step, not a graph node"). Replay and
the viewer still show it as its own entry, `start`, before action #0's observe.
"""

from __future__ import annotations

from typing import Any

from fakegang.graph import learning, resources
from fakegang.graph.context import Context
from fakegang.graph.nodes.common import ACTIONS_PER_STEP_BUDGET
from fakegang.graph.nodes.spec import NodeSpec
from fakegang.graph.state import TALLY_KEYS, EpisodeState
from fakegang.tools.env_client import reset_options
from fakegang.tools.learning import insights
from fakegang.tools.memory.store import utc_now
from fakegang_env.tasks import get_task

#: The state keys the start writes (with the pinned keys of `learning.pinned_at_start`).
START_KEYS: tuple[str, ...] = (
    "thread_id",
    "seed",
    "env_episode_id",
    "starting_ids",
    "max_steps",
    "max_actions",
    "weights_version",
    "trace_yields",
    "alpha",
    "llm_gain",
    "explore_rate",
    "explore_report_weight",
    "llm_stake",
    "insights",
    "lesson_ids",
    "few_shot_thread",
)


def has_started(state: dict[str, Any]) -> bool:
    """The environment was reset for this episode (what the start leaves behind)."""
    return bool(state.get("env_episode_id"))


def start_episode(state: EpisodeState, ctx: Context, thread_id: str) -> dict[str, Any]:
    """Reset the environment (episode id = thread id, so a re-run resets the same episode)."""
    task = get_task(state["task"])
    memory = resources.memory(ctx)
    obs = resources.env_client(ctx).reset(
        state["task"], state.get("seed"), episode_id=thread_id, **reset_options(state)
    )
    resources.store_observation(ctx, thread_id, obs)
    pinned = learning.pinned_at_start(ctx, memory, task.name)
    with memory.locked():
        learned = [i.text for i in insights.active(memory, task.name)] if ctx.learn else []
    lessons = memory.reflections(task.name, n=ctx.k_reflections)
    best = memory.best_trajectory(task.name)
    memory.upsert_episode(
        {
            "thread_id": thread_id,
            "run_id": state.get("run_id", ""),
            "episode": state.get("episode", 0),
            "task": task.name,
            "seed": obs.seed,
            "status": "running",
            "started_at": utc_now(),
            "kind": ctx.run_kind,
            "learns": int(ctx.learn),
        }
    )
    return {
        "thread_id": thread_id,
        "seed": obs.seed,  # a campaign round's seed is derived by the environment
        "env_episode_id": obs.episode_id or thread_id,
        "starting_ids": list(obs.visible_account_ids),
        "max_steps": task.max_steps,
        "max_actions": task.max_steps * ACTIONS_PER_STEP_BUDGET,
        **pinned,  # weights_version, trace_yields, alpha, llm_gain, explore_rate, ..., llm_stake
        "insights": learned,
        "lesson_ids": [r.id for r in lessons],
        "few_shot_thread": best.thread_id if best else None,
        "action_count": obs.action_count,
        "step_count": obs.step_count,
        "steps_remaining": obs.steps_remaining,
        "done": obs.done,
        "tally": dict.fromkeys(TALLY_KEYS, 0),
    }


def summary(values: dict[str, Any], parent_values: dict[str, Any]) -> str:
    stake = values.get("llm_stake")
    return (
        f"task {values.get('task')} seed {values.get('seed')}: "
        f"{len(values.get('starting_ids') or [])} starting accounts, "
        f"{values.get('max_steps')} steps ({values.get('max_actions')} actions at most); "
        f"α {values.get('alpha', 0):.2f}, weights version {values.get('weights_version')}, "
        f"{len(values.get('lesson_ids') or [])} lessons, "
        f"{len(values.get('insights') or [])} insights, "
        f"LLM stake {'unbounded' if stake is None else stake}"
    )


SPEC = NodeSpec(
    name="start",
    function=start_episode,
    writes=START_KEYS,
    summary=summary,
    panel="the episode start",
    in_graph=False,
    opens_action=True,
    custom_panel=True,
)
