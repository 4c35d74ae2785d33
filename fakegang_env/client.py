"""`FakeGangEnv`: the typed OpenEnv client (WebSocket `/ws`, one episode per connection).

    async with FakeGangEnv(base_url="http://127.0.0.1:8000") as env:
        result = await env.reset(task="hard", seed=7)
        result = await env.step(FakeGangAction(action_type="inspect", account_id=some_id))

    with FakeGangEnv(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(task="easy", seed=0)

Against a server started with a token, pass `headers={"Authorization": "Bearer ..."}` or set
`$FAKEGANG_ENV_TOKEN` (used when no Authorization header is given).

Plain-HTTP clients (no OpenEnv import) use `/reset`, `/step`, `/state` with an `episode_id`
instead; see `fakegang_env/server/routes.py`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from fakegang_env.models import FakeGangAction, FakeGangObservation, FakeGangState
from fakegang_env.schema import TOKEN_ENV


class FakeGangEnv(EnvClient[FakeGangAction, FakeGangObservation, FakeGangState]):
    """OpenEnv client for fakegang_env; `step` also accepts a plain dict action."""

    def __init__(self, *args: Any, headers: dict[str, str] | None = None, **kwargs: Any):
        token = os.environ.get(TOKEN_ENV)
        if token and not any(k.lower() == "authorization" for k in headers or {}):
            headers = {**(headers or {}), "Authorization": f"Bearer {token}"}
        super().__init__(*args, headers=headers, **kwargs)

    def _step_payload(self, action: FakeGangAction | Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(action, FakeGangAction):
            action = FakeGangAction.model_validate(dict(action))
        return action.model_dump(mode="json", exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[FakeGangObservation]:
        observation = FakeGangObservation.model_validate(
            {
                **payload.get("observation", {}),
                "reward": payload.get("reward"),
                "done": payload.get("done", False),
            }
        )
        return StepResult(
            observation=observation,
            reward=observation.reward,
            done=observation.done,
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> FakeGangState:
        return FakeGangState.model_validate(payload)
