"""`FakeGangEnvironment`: the OpenEnv `Environment` around one engine `Episode`.

OpenEnv creates one instance per WebSocket connection (`/ws`), so an instance holds one episode
at a time and shares nothing with other instances (`SUPPORTS_CONCURRENT_SESSIONS = True`).
Plain-HTTP episodes do not go through this class: `routes.py` keeps them in a registry and
serialises the engine's dicts directly, which is much cheaper than pydantic round trips.
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
from fakegang_env.server.requests import ResetConflict, ResetParams

ENV_NAME = "fakegang_env"
ENV_VERSION = "0.1.0"
ENV_DESCRIPTION = (
    "Uncover a coordinated ring of fake accounts hidden in a synthetic social network, on a "
    "step budget: inspect profiles, explore the follow graph, flag suspects, submit."
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
        if seed is not None:
            raw["seed"] = seed
        if episode_id is not None:
            raw["episode_id"] = episode_id
        if task is not None:
            raw["task"] = task
        try:
            params = ResetParams.model_validate(raw)
            seed, playbook = params.episode_spec()
        except ValidationError as exc:
            raise ValueError(f"invalid reset arguments: {_readable(exc)}") from None
        except ResetConflict as exc:
            raise ValueError(f"invalid reset arguments: {exc}") from None
        self._episode = Episode(
            params.task,
            seed,
            episode_id=params.episode_id or str(uuid.uuid4()),
            tactics=playbook,
        )
        return FakeGangObservation.model_validate(self._episode.observation())

    def step(
        self, action: FakeGangAction, timeout_s: float | None = None, **kwargs: Any
    ) -> FakeGangObservation:
        """Apply one action; illegal-but-well-formed actions come back as observations."""
        if self._episode is None:
            raise RuntimeError("no episode in this session: call reset() first")
        result = self._episode.step(action.action_type.value, action.account_id)
        return FakeGangObservation.model_validate(result)

    @property
    def state(self) -> FakeGangState:
        if self._episode is None:
            return FakeGangState()
        return FakeGangState.model_validate(self._episode.state())

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

    def close(self) -> None:
        self._episode = None
