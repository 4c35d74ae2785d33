"""What several nodes share: the thread id and the evidence scores of the current observation."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from fakegang.graph import learning, resources
from fakegang.graph.context import Context
from fakegang.graph.state import EpisodeState
from fakegang.tools.rules.engine import score_observation
from fakegang.tools.rules.pivots import shipped_yields

#: Free actions (flag/unflag) cost no budget, so cap the actions of an episode to stop a
#: flag/unflag loop; past the cap the agent submits.
ACTIONS_PER_STEP_BUDGET = 3


def thread_id_of(config: RunnableConfig) -> str:
    return str(config["configurable"]["thread_id"])


def scores(state: EpisodeState, ctx: Context, thread_id: str):
    """Evidence scores of the current observation, computed once per step (observe, rule_check
    and llm_decide all need them). Scoring runs outside the lock; it is a pure function."""
    hit = resources.STEP_CACHE.get(thread_id, state["action_count"], "scores")
    if hit is not None:
        return hit
    obs = resources.load_observation(ctx, thread_id, state["action_count"])
    weights = learning.episode_weights(ctx, state["task"], state.get("weights_version"))
    found = score_observation(obs, state["starting_ids"], weights, yields(state))
    resources.STEP_CACHE.put(thread_id, state["action_count"], "scores", found)
    return found


def yields(state: EpisodeState) -> dict[str, float]:
    """The trace yields the episode pinned (an episode checkpointed before pivots existed: the
    shipped ones)."""
    return state.get("trace_yields") or shipped_yields(state["task"])
