"""Request bodies of our HTTP routes, and reset parameters shared with the WebSocket path.

Pure pydantic (no OpenEnv import). Unknown keys are rejected rather than ignored: a typo such as
`"sed": 3` would otherwise silently start a different episode than the client meant.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from fakegang_env.schema import ActionFields
from fakegang_env.tasks import TASK_NAMES, get_task

DEFAULT_TASK = "easy"
MAX_SEED = 2**63 - 1
#: Episode ids travel in query strings and logs: keep them to a safe alphabet.
EPISODE_ID_PATTERN = r"^[A-Za-z0-9_.:\-]{1,255}$"
EPISODE_ID_RULE = "1-255 characters from A-Z a-z 0-9 _ . : -"
_EPISODE_ID_RE = re.compile(EPISODE_ID_PATTERN)


def random_seed() -> int:
    """Seed used when a reset names none (reported back in the observation)."""
    return secrets.randbelow(2**31)


class ResetParams(BaseModel):
    """`POST /reset` body (flat, as in OpenEnv) and the WebSocket reset keyword arguments."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(default=DEFAULT_TASK, description=f"One of: {', '.join(TASK_NAMES)}")
    seed: StrictInt | None = Field(
        default=None, ge=0, le=MAX_SEED, description="Network seed; random when absent"
    )
    episode_id: str | None = Field(
        default=None,
        description=f"Your id for the episode ({EPISODE_ID_RULE}); a uuid4 when absent",
    )

    @field_validator("task")
    @classmethod
    def _known_task(cls, value: str) -> str:
        get_task(value)  # raises UnknownTaskError (a ValueError) naming the valid tasks
        return value

    @field_validator("episode_id")
    @classmethod
    def _safe_episode_id(cls, value: str | None) -> str | None:
        if value is not None and not _EPISODE_ID_RE.fullmatch(value):
            raise ValueError(f"episode_id must be {EPISODE_ID_RULE}, got {value[:80]!r}")
        return value


class WireAction(ActionFields):
    """The action inside a `POST /step` body; `metadata` is accepted as OpenEnv clients send it."""

    metadata: dict[str, Any] = Field(default_factory=dict)


class StepBody(BaseModel):
    """`POST /step` body: OpenEnv's shape (`action`, `timeout_s`, `request_id`) plus ours."""

    model_config = ConfigDict(extra="forbid")

    action: WireAction
    episode_id: str | None = Field(
        default=None,
        max_length=255,
        description="Episode to act in (from /reset); the default episode when absent",
    )
    action_index: StrictInt | None = Field(
        default=None,
        ge=0,
        description="The episode's action_count before this action; makes retries safe",
    )
    timeout_s: float | None = Field(default=None, gt=0, description="Accepted for OpenEnv; unused")
    request_id: str | None = Field(
        default=None, max_length=255, description="Accepted for OpenEnv compatibility; unused"
    )
