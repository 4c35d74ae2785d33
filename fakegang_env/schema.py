"""Wire shapes of actions, profiles and observations, as plain pydantic models.

`models.py` combines these fields with OpenEnv's base classes for the server and the OpenEnv
client. They live here, free of any OpenEnv import, because importing `openenv.core` costs
several seconds (it pulls in gradio) and the agent and the CLI should not pay that.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

ACCOUNT_ID_MAX_LEN = 64
TRACE_MAX_LEN = 32
#: The environment variable with the server's bearer token (`fakegang env serve --token`): the
#: server requires it and every client sends it, so an embedded server and its client agree.
TOKEN_ENV = "FAKEGANG_ENV_TOKEN"


class ActionType(StrEnum):
    INSPECT = "inspect"
    INVESTIGATE_NETWORK = "investigate_network"
    FLAG = "flag"
    UNFLAG = "unflag"
    SUBMIT = "submit"
    PIVOT = "pivot"


#: Budget steps consumed by each action type.
STEP_COST: dict[ActionType, int] = {
    ActionType.INSPECT: 1,
    ActionType.INVESTIGATE_NETWORK: 2,
    ActionType.FLAG: 0,
    ActionType.UNFLAG: 0,
    ActionType.SUBMIT: 0,
    ActionType.PIVOT: 1,
}

#: Reward of each action type (the terminal reward of SUBMIT is added separately).
STEP_REWARD: dict[ActionType, float] = {
    ActionType.INSPECT: -0.01,
    ActionType.INVESTIGATE_NETWORK: -0.02,
    ActionType.FLAG: 0.0,
    ActionType.UNFLAG: 0.0,
    ActionType.SUBMIT: 0.0,
    ActionType.PIVOT: -0.01,
}


class ActionFields(BaseModel):
    """What an investigator sends: an action type and, except for SUBMIT, an account id."""

    model_config = ConfigDict(extra="forbid")

    action_type: ActionType = Field(
        description="inspect | investigate_network | flag | unflag | submit | pivot"
    )
    account_id: str | None = Field(
        default=None,
        max_length=ACCOUNT_ID_MAX_LEN,
        description="Target account (required for every action except submit)",
    )
    trace: str | None = Field(
        default=None,
        max_length=TRACE_MAX_LEN,
        description="pivot only: the trace to search by (GET /tasks lists them under `traces`)",
    )


class AccountProfile(BaseModel):
    """Raw signals of one account as seen when it was last INSPECTed (a snapshot)."""

    model_config = ConfigDict(extra="forbid")

    account_id: str
    follower_count: int
    following_count: int
    post_count: int
    avg_post_hour: float
    account_age_days: int
    photo_reuse_score: float
    bio_template_score: float
    comment_repeat_score: float
    ip_cluster_id: str
    shared_ip_count: int
    name_change_count: int
    mutual_follow_rate: float
    visible_follows: list[str]
    inspected_at_step: int = Field(description="step_count when this snapshot was taken")


class PivotResult(BaseModel):
    """One pivot as a platform search answered it: a page of matching ids and the total."""

    model_config = ConfigDict(extra="forbid")

    account_id: str = Field(description="The inspected account pivoted from")
    trace: str = Field(description="The trace searched by")
    at_step: int = Field(description="step_count before the pivot")
    total: int = Field(description="How many other accounts share the value")
    account_ids: list[str] = Field(
        description="The first page of them (at most the page size), in an order that says "
        "nothing about membership; all made visible"
    )


class OperatorDebrief(BaseModel):
    """An adaptive campaign round's operator, revealed on the terminal observation only."""

    model_config = ConfigDict(extra="forbid")

    round: int = Field(description="0-based round of the campaign this debrief ends")
    playbook: dict[str, float] = Field(description="The channel strengths the ring played")
    cost: float = Field(description="What the playbook cost under the evasion budget")
    members: int = Field(description="The ring's members")
    caught: int = Field(description="Members flagged when the round ended (the takedown list)")
    survival: float = Field(description="Share of members not taken down")
    reason: str = Field(description="Why the operator played this playbook, in one line")
    move: str | None = Field(
        default=None,
        description="The channel the operator weakened for this round (null: the opening "
        "playbook, or the last one kept)",
    )
    next_token: str | None = Field(
        default=None,
        description="Opaque operator state for the next round: send it as `operator_token` "
        "with the reset of round `round + 1`",
    )


class ObservationFields(BaseModel):
    """Everything an investigator sees after an action (OpenEnv adds `done` and `reward`)."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str | None = None
    task: str = ""
    seed: int | None = None
    message: str = ""
    last_action_error: str | None = None
    episode_return: float = 0.0
    max_steps: int = 0
    steps_remaining: int = 0
    step_count: int = 0
    action_count: int = 0
    visible_account_ids: list[str] = Field(default_factory=list)
    inspected_ids: list[str] = Field(default_factory=list)
    investigated_ids: list[str] = Field(default_factory=list)
    flagged_ids: list[str] = Field(default_factory=list)
    suspect_ids: list[str] = Field(default_factory=list)
    visible_accounts: list[AccountProfile] = Field(default_factory=list)
    graph_edges: dict[str, list[str]] = Field(default_factory=dict)
    evasion_triggered: bool = False
    evasion_count: int = 0
    grader_score: float | None = None
    tp: int | None = None
    fp: int | None = None
    fn: int | None = None
    recall: float | None = None
    precision: float | None = None
    pivots: list[PivotResult] = Field(
        default_factory=list, description="Every pivot applied so far, oldest first"
    )
    ring_ids: list[str] | None = Field(
        default=None,
        description="Debrief on the terminal observation only: the ring's account ids, sorted "
        "(null before the episode ends)",
    )
    operator: OperatorDebrief | None = Field(
        default=None,
        description="Debrief of an adaptive campaign round on its terminal observation only: "
        "the operator's playbook, survival and reason, and the next round's token",
    )


class PlainObservation(ObservationFields):
    """Observation for code that must not import OpenEnv (the agent, the CLI, policies)."""

    done: bool = False
    reward: float | None = None
