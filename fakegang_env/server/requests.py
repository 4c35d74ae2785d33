"""Request bodies of our HTTP routes, and reset parameters shared with the WebSocket path.

Pure pydantic (no OpenEnv import). Unknown keys are rejected rather than ignored: a typo such as
`"sed": 3` would otherwise silently start a different episode than the client meant.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from fakegang_env.operator import OperatorState, opening
from fakegang_env.operator_token import MAX_TOKEN_LENGTH, TOKEN_PATTERN, open_token
from fakegang_env.schema import ActionFields
from fakegang_env.tactics import (
    ADAPTIVE,
    ADAPTIVE_NOTE,
    CAMPAIGN_TACTICS,
    GENERATION_NOTES,
    MAX_ROUND,
    Playbook,
    campaign_round,
    resolve_playbook,
    round_seed,
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
TacticsName = StrEnum("TacticsName", {name: name for name in CAMPAIGN_TACTICS})


class ResetConflict(ValueError):
    """Reset options that are valid one by one but not together (HTTP 400)."""


@dataclass(frozen=True)
class EpisodeSpec:
    """What a reset plays: the network seed, the playbook and, for an adaptive round, the
    operator's state (its debrief comes with the terminal observation)."""

    seed: int
    playbook: Playbook
    operator: OperatorState | None = None


_NOT_ADAPTIVE = {"not": {"const": ADAPTIVE}}
#: `episode_spec`'s combination rules, stated in the schema so that a client generated from it
#: (or a fuzzer) knows them: a network by seed (`campaign` and `round` absent or null), a
#: campaign round (`campaign` and `round` both integers, `seed` absent or null), and for
#: `tactics=adaptive` only, its first round (no token) or a later one (with the previous
#: round's `operator_token`). Plain `anyOf` branches, the simplest form for client generators.
RESET_SHAPES: list[dict[str, Any]] = [
    {
        "title": "A network by seed",
        "properties": {
            "campaign": {"type": "null"},
            "round": {"type": "null"},
            "tactics": _NOT_ADAPTIVE,
            "operator_token": {"type": "null"},
        },
    },
    {
        "title": "A campaign round",
        "required": ["campaign", "round"],
        "properties": {
            "campaign": {"type": "integer"},
            "round": {"type": "integer"},
            "seed": {"type": "null"},
            "tactics": _NOT_ADAPTIVE,
            "operator_token": {"type": "null"},
        },
    },
    {
        "title": "The first round of an adaptive campaign",
        "required": ["campaign", "round", "tactics"],
        "properties": {
            "campaign": {"type": "integer"},
            "round": {"const": 0},
            "seed": {"type": "null"},
            "tactics": {"const": ADAPTIVE},
            "operator_token": {"type": "null"},
        },
    },
    {
        "title": "A later round of an adaptive campaign",
        "required": ["campaign", "round", "tactics", "operator_token"],
        "properties": {
            "campaign": {"type": "integer"},
            "round": {"type": "integer", "minimum": 1},
            "seed": {"type": "null"},
            "tactics": {"const": ADAPTIVE},
            "operator_token": {"type": "string"},
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
        + "; ".join(f"{name} = {note}" for name, note in GENERATION_NOTES.items())
        + f"; {ADAPTIVE} = {ADAPTIVE_NOTE}",
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
    operator_token: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_TOKEN_LENGTH,
        pattern=TOKEN_PATTERN,
        description=f"tactics={ADAPTIVE} only, from round 1 on: the opaque `next_token` of the "
        "previous round's debrief (`observation.operator.next_token`)",
    )

    def episode_spec(self, key: bytes | None = None) -> EpisodeSpec:
        """What this reset plays; a random seed when none is given. `key` opens an adaptive
        round's `operator_token`.

        Raises `ResetConflict` for options that contradict each other, and
        `OperatorTokenError` for a token that is forged (400) or from another round (409).
        """
        adaptive = self.tactics.value == ADAPTIVE
        if self.operator_token is not None and not adaptive:
            raise ResetConflict(f"operator_token goes with tactics={ADAPTIVE} only")
        if self.campaign is None and self.round is None:
            if adaptive:
                raise ResetConflict(
                    f"tactics={ADAPTIVE} is for campaign rounds: send campaign and round"
                )
            seed = self.seed if self.seed is not None else random_seed()
            return EpisodeSpec(seed, resolve_playbook(self.task, seed, self.tactics.value))
        if self.campaign is None:
            raise ResetConflict("round needs campaign: send both (or neither)")
        if self.round is None:
            raise ResetConflict("campaign needs round: send both (or neither)")
        if self.seed is not None:
            raise ResetConflict(
                "seed cannot be combined with campaign: a campaign round derives its own seed "
                "(send either seed, or campaign and round)"
            )
        if adaptive:
            return self._adaptive_spec(self.campaign, self.round, key)
        spec = campaign_round(self.task, self.campaign, self.round, self.tactics.value)
        return EpisodeSpec(spec.seed, spec.playbook)

    def _adaptive_spec(self, campaign: int, k: int, key: bytes | None) -> EpisodeSpec:
        if k == 0:
            if self.operator_token is not None:
                raise ResetConflict("round 0 of an adaptive campaign takes no operator_token")
            state = opening(self.task, campaign)
        elif self.operator_token is None:
            raise ResetConflict(
                f"round {k} of an adaptive campaign needs operator_token: the next_token of "
                f"round {k - 1}'s debrief"
            )
        else:
            if key is None:
                raise ResetConflict("this server holds no operator key")
            state = open_token(self.operator_token, key, task=self.task, campaign=campaign, round=k)
        return EpisodeSpec(round_seed(self.task, campaign, k), state.as_playbook(), state)

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
