"""`FakeGangEnvironment`: the OpenEnv `Environment` around one engine `Episode`.

OpenEnv creates one instance per WebSocket connection (`/ws`), so an instance holds one episode
at a time and shares nothing with other instances (`SUPPORTS_CONCURRENT_SESSIONS = True`).
Plain-HTTP episodes do not go through this class: `routes.py` keeps them in a registry and
serialises the engine's dicts directly, which is much cheaper than pydantic round trips.

Reward modes (reset option `reward_mode`, this `/ws` path only): `shaped` (the default) serves the
engine's step costs and terminal reward; `grader` serves 0.0 on every step and the episode's
grader score (in [0, 1]) on the terminal one. The OpenEnv validation manifest (`openenv.yaml`)
declares the `grader` channel: its reward range is [0, 1] and a correct investigation reaches its
top, which no fixed range can say of the shaped reward (its maximum grows with the ring's size).
The observation itself (including `episode_return`) is the same in both modes.

`state.step_count` here is OpenEnv's: the number of `step` messages since the reset (illegal
actions included), which OpenEnv's `runtime.state_contract` check requires. The step *budget*
used is `max_steps - steps_remaining` (and the observation's `step_count`).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import ValidationError

from fakegang_env.engine import Episode
from fakegang_env.models import FakeGangAction, FakeGangObservation, FakeGangState
from fakegang_env.operator_token import OperatorTokenError
from fakegang_env.server.catalog import tasks_catalog
from fakegang_env.server.requests import ResetConflict, ResetParams
from fakegang_env.server.rounds import OperatorKeyError, new_episode, reset_spec

ENV_NAME = "fakegang_env"
ENV_VERSION = "0.1.0"
REWARD_MODES: tuple[str, ...] = ("shaped", "grader")
TASK_SPLIT = "tasks"
ENV_DESCRIPTION = (
    "Uncover a coordinated ring of fake accounts hidden in a synthetic social network, on a "
    "step budget: inspect profiles, explore the follow graph, pivot on shared traces, flag "
    "suspects, submit."
)


def _readable(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'reset'}: "
        f"{str(err['msg']).removeprefix('Value error, ')}"
        for err in exc.errors()
    )


class FakeGangEnvironment(Environment[FakeGangAction, FakeGangObservation, FakeGangState]):
    """One episode per instance; deterministic in (task, seed, actions)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._episode: Episode | None = None
        self._reward_mode = "shaped"
        self._steps_taken = 0

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        **kwargs: Any,
    ) -> FakeGangObservation:
        """Start a new episode. Bad arguments raise `ValueError` with a readable message
        (over `/ws` OpenEnv turns it into an error frame; the session stays usable).
        Takes the same options as HTTP `/reset`: `tactics`, `campaign` and `round` too."""
        raw: dict[str, Any] = dict(kwargs)
        reward_mode = raw.pop("reward_mode", "shaped")
        if reward_mode not in REWARD_MODES:
            raise ValueError(
                f"invalid reset arguments: reward_mode must be one of {', '.join(REWARD_MODES)}, "
                f"got {str(reward_mode)[:40]!r}"
            )
        if seed is not None:
            raw["seed"] = seed
        if episode_id is not None:
            raw["episode_id"] = episode_id
        if task is not None:
            raw["task"] = task
        try:
            params = ResetParams.model_validate(raw)
            spec = reset_spec(params)
        except ValidationError as exc:
            raise ValueError(f"invalid reset arguments: {_readable(exc)}") from None
        except (ResetConflict, OperatorTokenError) as exc:
            raise ValueError(f"invalid reset arguments: {exc}") from None
        except OperatorKeyError as exc:
            raise ValueError(str(exc)) from None
        try:
            episode = new_episode(params.task, spec, params.episode_id or str(uuid.uuid4()))
        except OperatorKeyError as exc:
            raise ValueError(str(exc)) from None
        self._episode = episode
        self._reward_mode = reward_mode
        self._steps_taken = 0
        return FakeGangObservation.model_validate(self._episode.observation())

    def step(
        self, action: FakeGangAction, timeout_s: float | None = None, **kwargs: Any
    ) -> FakeGangObservation:
        """Apply one action; illegal-but-well-formed actions come back as observations."""
        if self._episode is None:
            raise RuntimeError("no episode in this session: call reset() first")
        finished_before = self._episode.done
        self._steps_taken += 1
        result = self._episode.step(action.action_type.value, action.account_id, action.trace)
        if self._reward_mode == "grader":  # the score once, on the step that ends the episode
            ends_now = result["done"] and not finished_before
            result["reward"] = result["grader_score"] if ends_now else 0.0
        return FakeGangObservation.model_validate(result)

    @property
    def state(self) -> FakeGangState:
        if self._episode is None:
            return FakeGangState()
        return FakeGangState.model_validate(
            {**self._episode.state(), "step_count": self._steps_taken}
        )

    def grader(self) -> dict[str, Any] | None:
        """The finished episode's grader result, or None while it runs (or before reset)."""
        return None if self._episode is None else self._episode.grader()

    def get_metadata(self) -> EnvironmentMetadata:
        readme = Path(__file__).resolve().parent.parent / "README.md"
        return EnvironmentMetadata(
            name=ENV_NAME,
            description=ENV_DESCRIPTION,
            version=ENV_VERSION,
            readme_content=readme.read_text(encoding="utf-8") if readme.is_file() else None,
        )

    # -- OpenEnv's Task API (TaskProvider): `/fakegang_env/splits`, `/num_tasks`, `/tasks`, ... --
    # One split, `tasks`, whose entries are GET /tasks' entries (easy, medium, hard): what
    # `declared_task_count` in openenv.yaml declares. Seeds are not tasks: every seed of a task
    # is an instance of it. An unknown split raises IndexError, which OpenEnv answers with 400.
    def list_splits(self) -> list[str]:
        return [TASK_SPLIT]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        if split != TASK_SPLIT:
            raise IndexError(f"unknown split {split!r}; the only split is {TASK_SPLIT!r}")
        return tasks_catalog()["tasks"]

    def num_tasks(self, split: str) -> int:
        return len(self.list_tasks(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        tasks = self.list_tasks(split)
        if not 0 <= index < len(tasks):
            raise IndexError(f"task index {index} out of range 0-{len(tasks) - 1}")
        return tasks[index]

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        return self.list_tasks(split)[start:stop]

    def close(self) -> None:
        self._episode = None
