"""Rebuild an environment episode from its recorded actions.

The environment server keeps episodes in memory only: a restarted server (or the embedded one,
which dies with a killed training process) answers 404 for the episode a checkpoint points at.
Episodes are deterministic given (task, seed, actions), so the episode is rebuilt by resetting
the same task and seed under the same episode id and replaying the actions recorded in the
`steps` table, each with its action index; the rebuilt observation must then match the
checkpointed counters, otherwise we refuse to continue on a desynchronised episode.

`fakegang fork` uses the same replay to put a *new* episode id at action K.
"""

from __future__ import annotations

import logging

from fakegang.graph import resources
from fakegang.tools.env_client import EnvClient, reset_options
from fakegang.tools.rules.actions import parse_step
from fakegang_env.schema import PlainObservation

log = logging.getLogger("fakegang.recovery")


class RebuildError(RuntimeError):
    """The recorded actions do not reproduce the checkpointed episode."""


def rebuild_env_episode(
    client: EnvClient,
    *,
    task: str,
    seed: int,
    episode_id: str,
    actions: list[tuple[int, str]],
    expect_action_count: int,
    expect_step_count: int,
    tactics: str | None = None,
    campaign: int | None = None,
    round: int | None = None,
    operator_token: str | None = None,
) -> PlainObservation:
    """Reset (task, seed) as `episode_id`, replay `actions` [(idx, action)], check the counters.

    `actions` must hold exactly the indexes 0..expect_action_count-1. `tactics`, `campaign` and
    `round` (and an adaptive round's `operator_token`) are the episode's own reset options (the
    same playbook and, for a campaign round, the same derived seed).
    """
    indexes = [idx for idx, _ in actions]
    if indexes != list(range(expect_action_count)):
        missing = sorted(set(range(expect_action_count)) - set(indexes))
        raise RebuildError(
            f"cannot rebuild episode {episode_id}: the steps table should hold actions "
            f"0..{expect_action_count - 1} but it is missing {missing[:10]}"
        )
    obs = client.reset(
        task,
        seed,
        episode_id=episode_id,
        tactics=tactics,
        campaign=campaign,
        round=round,
        operator_token=operator_token,
    )
    for idx, action in actions:
        action_type, account_id, trace = parse_step(action)
        obs = client.step(episode_id, action_type, account_id, idx, trace)
        if obs.last_action_error:
            raise RebuildError(
                f"cannot rebuild episode {episode_id}: recorded action {idx} ({action}) is "
                f"illegal on replay: {obs.last_action_error}"
            )
    if obs.action_count != expect_action_count or obs.step_count != expect_step_count:
        raise RebuildError(
            f"rebuilt episode {episode_id} does not match the checkpoint: action_count "
            f"{obs.action_count} (expected {expect_action_count}), step_count {obs.step_count} "
            f"(expected {expect_step_count})"
        )
    return obs


def rebuild_for_state(ctx, state: dict, thread_id: str) -> PlainObservation:
    """Rebuild the env episode a checkpointed state points at (used by `step_env` on 404/409).

    Replays the recorded actions below the state's `action_count`: the pending action of the
    checkpoint (which may or may not have reached the dead server) is then sent by `step_env`.
    """
    k = int(state["action_count"])
    recorded = [(s["idx"], s["action"]) for s in resources.memory(ctx).steps(thread_id)]
    obs = rebuild_env_episode(
        resources.env_client(ctx),
        task=state["task"],
        seed=int(state["seed"]),
        episode_id=state["env_episode_id"],
        actions=[(idx, a) for idx, a in recorded if idx < k],
        expect_action_count=k,
        expect_step_count=int(state["step_count"]),
        **reset_options(state),
    )
    log.warning(
        "environment had lost episode %s: rebuilt it from %d recorded actions", thread_id, k
    )
    return obs
