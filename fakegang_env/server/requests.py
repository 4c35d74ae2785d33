"""Request bodies of our HTTP routes, and reset parameters shared with the WebSocket path.

Pure pydantic (no OpenEnv import). Unknown keys are rejected rather than ignored: a typo such as
`"sed": 3` would otherwise silently start a different episode than the client meant.
"""

from __future__ import annotations

import re
import secrets
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from fakegang_env.schema import ActionFields
from fakegang_env.tactics import (
    GENERATION_NOTES,
    MAX_ROUND,
    TACTICS_NAMES,
    Playbook,
    campaign_round,
    resolve_playbook,
)
from fakegang_env.tasks import TASK_NAMES, get_task

DEFAULT_TASK = "easy"
#: The largest integer every JSON client reads exactly (JavaScript's MAX_SAFE_INTEGER); larger
#: bounds turn into floats in the OpenAPI document and lose the last digits.
MAX_SEED = 2**53 - 1
#: Episode ids travel in query strings and logs: keep them to a safe alphabet.
EPISODE_ID_PATTERN = r"^[A-Za-z0-9_.:\-]{1,255}$"
EPISODE_ID_RULE = "1-255 characters from A-Z a-z 0-9 _ . : -"
#: The same rule for `?episode_id=` (pydantic's regex: `$` is the end of the text, no newline).
EPISODE_ID_QUERY_PATTERN = EPISODE_ID_PATTERN
_EPISODE_ID_RE = re.compile(r"[A-Za-z0-9_.:\-]{1,255}")
#: Declares the rule in the JSON schema; `_safe_episode_id` enforces it with a readable message
#: (at the top level of `str | None` a `pattern` constrains only the string branch).
_EPISODE_ID_SCHEMA = {"pattern": EPISODE_ID_PATTERN, "minLength": 1, "maxLength": 255}


def _check_episode_id(value: str | None) -> str | None:
    if value is not None and not _EPISODE_ID_RE.fullmatch(value):
        raise ValueError(f"episode_id must be {EPISODE_ID_RULE}, got {value[:80]!r}")
    return value


def _integral(value: Any) -> Any:
    """JSON has one number type: `5.0` is an integer in JSON Schema, so it is accepted as 5.
    `5.5`, `"5"` and `true` stay errors (strict int)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def random_seed() -> int:
    """Seed used when a reset names none (reported back in the observation)."""
    return secrets.randbelow(2**31)


#: The tactics names as an enum, so the OpenAPI schema (and Schemathesis) carries the valid values.
TacticsName = StrEnum("TacticsName", {name: name for name in TACTICS_NAMES})


class ResetConflict(ValueError):
    """Reset options that are valid one by one but not together (HTTP 400)."""


#: `episode_spec`'s combination rule, stated in the schema so that a client generated from it (or
#: a fuzzer) knows it: either a network by seed (`campaign` and `round` absent or null), or a
#: campaign round (`campaign` and `round` both integers, `seed` absent or null). Plain `anyOf`
#: branches, the simplest form for client generators.
RESET_SHAPES: list[dict[str, Any]] = [
    {
        "title": "A network by seed",
        "properties": {"campaign": {"type": "null"}, "round": {"type": "null"}},
    },
    {
        "title": "A campaign round",
        "required": ["campaign", "round"],
        "properties": {
            "campaign": {"type": "integer"},
            "round": {"type": "integer"},
            "seed": {"type": "null"},
        },
    },
]


class ResetParams(BaseModel):
    """`POST /reset` body (flat, as in OpenEnv) and the WebSocket reset keyword arguments."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"anyOf": RESET_SHAPES})

    task: str = Field(
        default=DEFAULT_TASK,
        description=f"One of: {', '.join(TASK_NAMES)}",
        json_schema_extra={"enum": list(TASK_NAMES)},
    )
    seed: StrictInt | None = Field(
        default=None, ge=0, le=MAX_SEED, description="Network seed; random when absent"
    )
    episode_id: str | None = Field(
        default=None,
        description=f"Your id for the episode ({EPISODE_ID_RULE}); a uuid4 when absent",
        json_schema_extra=_EPISODE_ID_SCHEMA,
    )
    tactics: TacticsName = Field(
        default=TacticsName("classic"),
        description="The ring operator's playbook: "
        + "; ".join(f"{name} = {note}" for name, note in GENERATION_NOTES.items()),
    )
    campaign: StrictInt | None = Field(
        default=None,
        ge=0,
        le=MAX_SEED,
        description="Campaign seed: with `round`, the network seed and the (hidden) playbook of "
        "that round are derived; `seed` must then be absent",
    )
    round: StrictInt | None = Field(
        default=None,
        ge=0,
        le=MAX_ROUND,
        description="0-based round of `campaign` (required with campaign, forbidden without)",
    )

    def episode_spec(self) -> tuple[int, Playbook]:
        """(network seed, playbook) of this reset; a random seed when none is given.

        Raises `ResetConflict` for options that contradict each other.
        """
        if self.campaign is None and self.round is None:
            seed = self.seed if self.seed is not None else random_seed()
            return seed, resolve_playbook(self.task, seed, self.tactics.value)
        if self.campaign is None:
            raise ResetConflict("round needs campaign: send both (or neither)")
        if self.round is None:
            raise ResetConflict("campaign needs round: send both (or neither)")
        if self.seed is not None:
            raise ResetConflict(
                "seed cannot be combined with campaign: a campaign round derives its own seed "
                "(send either seed, or campaign and round)"
            )
        spec = campaign_round(self.task, self.campaign, self.round, self.tactics.value)
        return spec.seed, spec.playbook

    _integral_seed = field_validator("seed", "campaign", "round", mode="before")(_integral)

    @field_validator("task")
    @classmethod
    def _known_task(cls, value: str) -> str:
        get_task(value)  # raises UnknownTaskError (a ValueError) naming the valid tasks
        return value

    _safe_episode_id = field_validator("episode_id")(_check_episode_id)


class WireAction(ActionFields):
    """The action inside a `POST /step` body; `metadata` is accepted as OpenEnv clients send it."""

    metadata: dict[str, Any] = Field(default_factory=dict)


class StepBody(BaseModel):
    """`POST /step` body: OpenEnv's shape (`action`, `timeout_s`, `request_id`) plus ours."""

    model_config = ConfigDict(extra="forbid")

    action: WireAction
    episode_id: str | None = Field(
        default=None,
        description="Episode to act in (from /reset); the default episode when absent",
        json_schema_extra=_EPISODE_ID_SCHEMA,
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

    _safe_episode_id = field_validator("episode_id")(_check_episode_id)
    _integral_index = field_validator("action_index", mode="before")(_integral)
