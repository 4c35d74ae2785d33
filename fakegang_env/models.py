"""OpenEnv models: our pure wire schema combined with OpenEnv's Action / Observation / State bases.

The fields live in `fakegang_env.schema` (no OpenEnv import, so the agent and the CLI stay fast);
this module adds OpenEnv's base classes so `create_app`, `/schema` and `EnvClient` see real
OpenEnv models. Importing it imports `openenv.core` (several seconds).
"""

from __future__ import annotations

from openenv.core.env_server.types import Action, Observation, State
from pydantic import ConfigDict, Field

from fakegang_env.schema import ActionFields, ObservationFields

_OPENENV_CONFIG = ConfigDict(extra="forbid", validate_assignment=True, arbitrary_types_allowed=True)


class FakeGangAction(ActionFields, Action):
    """One investigator action (`action_type`, `account_id`) plus OpenEnv's `metadata`."""

    model_config = _OPENENV_CONFIG


class FakeGangObservation(ObservationFields, Observation):
    """What the investigator sees after an action; `done` and `reward` come from OpenEnv."""

    model_config = _OPENENV_CONFIG


class FakeGangState(State):
    """Episode bookkeeping returned by `GET /state` and the WebSocket `state` message."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    task: str | None = Field(default=None, description="Task name (easy, medium, hard)")
    seed: int | None = Field(default=None, description="Seed the network was generated from")
    action_count: int = Field(default=0, ge=0, description="Actions applied so far")
    max_steps: int = Field(default=0, ge=0, description="Step budget of the task")
    steps_remaining: int = Field(default=0, ge=0, description="Budget steps left")
    episode_return: float = Field(default=0.0, description="Cumulative reward")
    done: bool = Field(default=False, description="Whether the episode has ended")
    evasion_count: int = Field(default=0, ge=0, description="Times the ring has adapted so far")
    network_size: int = Field(default=0, ge=0, description="Accounts in the hidden network")
