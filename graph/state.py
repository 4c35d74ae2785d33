"""The episode graph's state: small and JSON-like, because every checkpoint stores all of it.

Full observations, step logs, reflections and trajectories live in the memory tables
(tools/memory/store.py); the state keeps the control fields plus what each node saw and decided in
the current step, replaced (never appended) at each step.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

# typing_extensions' TypedDict: pydantic (LangGraph's input/output JSON schemas, which Studio
# shows) refuses typing.TypedDict before Python 3.12
from typing_extensions import TypedDict

from fakegang.tools.learning.alpha import MODE_COLUMNS

#: The tally's counters: one per `mode_*` column (agree; rule_override, which also counts
#: rule_alone: every action the rule decided; llm), then the LLM's.
LLM_COUNTERS: tuple[str, ...] = ("llm_calls", "llm_tokens", "llm_errors")
#: Deciding calls: the LLM asked to decide, its answer acted on (not exploration calls). Its
#: stake bounds them.
DECIDING_CALLS = "llm_deciding_calls"
#: Answers of the LLM that proposed to submit (after one, it is not asked to explore again).
LLM_SUBMITS = "llm_submits"
TALLY_KEYS: tuple[str, ...] = (*MODE_COLUMNS, *LLM_COUNTERS, DECIDING_CALLS, LLM_SUBMITS)
#: The start of `llm_off` (and of the steps' llm_reason) once the model timed out in an episode.
BENCHED_REASON = "the model timed out at action #"


def add_counts(current: dict[str, int] | None, update: dict[str, int]) -> dict[str, int]:
    """The tally's reducer: a node returns only its increments and LangGraph adds them up."""
    merged = dict(current or {})
    for key, count in update.items():
        merged[key] = merged.get(key, 0) + count
    return merged


def tally_columns(tally: dict[str, int]) -> dict[str, int]:
    """An episode's decision and LLM counters under their metrics/`episodes` column names."""
    return {
        **{column: tally[mode] for mode, column in MODE_COLUMNS.items()},
        **{counter: tally[counter] for counter in LLM_COUNTERS},
    }


class ViewRecord(TypedDict):
    """observe's output: the budget and the top candidates with their evidence scores."""

    step_count: int
    steps_remaining: int
    visible: int
    inspected: int
    flagged: int
    suspects: int
    evasion_count: int
    top_inspected: list[list[Any]]  # [account, ring likelihood]
    top_frontier: list[list[Any]]  # [account, worth inspecting]


class RuleRecord(TypedDict):
    """rule_check's proposal."""

    action: str
    confidence: float
    reason: str
    hypothesis: NotRequired[bool]  # the action flags a hypothesis from the report


class LlmRecord(TypedDict, total=False):
    """llm_decide's output: `skipped` (not asked, with the reason), `ok` or `error`.

    `shadow` marks an exploration call (judged after the debrief, never acted on); the key keeps
    its first name so checkpoints written before the word "exploration" was chosen still read.
    """

    status: str
    reason: str
    shadow: bool
    action: str | None
    error: str | None
    error_class: str | None
    latency_s: float
    tokens: int
    prompt_tokens: int
    prompt_tokens_reused: int | None


class DecisionRecord(TypedDict):
    """arbitrate's decision: the action's index, the action and who decided it."""

    index: int
    action: str
    mode: str


class LastRecord(TypedDict):
    """step_env's record of the applied action and the environment's reply."""

    action: str
    message: str
    reward: float
    error: str | None


class StepRow(TypedDict, total=False):
    """One row of the `steps` table: the thread and action index, then the columns each node
    spec declares (graph/nodes/, `NodeSpec.step_row`)."""

    thread_id: str
    idx: int
    action: str
    mode: str
    rule_action: str
    rule_confidence: float
    rule_reason: str
    llm_status: str
    llm_action: str | None
    llm_reason: str | None
    llm_error: str | None
    llm_error_class: str | None
    llm_latency_s: float | None
    llm_tokens: int | None
    llm_prompt_tokens: int | None
    llm_prompt_tokens_reused: int | None
    alpha: float
    reward: float
    message: str
    steps_remaining: int
    view: str  # observe's ViewRecord as compact JSON


class EpisodeInput(TypedDict, total=False):
    """What starts an episode: task and seed, and the run and episode number it belongs to.

    Optional: `tactics` (the ring's playbook name, classic when absent) and `campaign` + `round`
    (a campaign round; the environment derives the seed, which then replaces `seed`); an adaptive
    round from round 1 on also carries `operator_token`, the previous round's debrief token.
    """

    task: str
    seed: int
    run_id: str
    episode: int
    tactics: str
    campaign: int
    round: int
    operator_token: str


class EpisodeOutput(TypedDict, total=False):
    """What an episode returns (`invoke`'s value, Studio's output panel): who it was, the α it
    played with, its decision and LLM counters and its outcome."""

    thread_id: str
    task: str
    seed: int
    run_id: str
    episode: int
    alpha: float
    tally: Annotated[dict[str, int], add_counts]  # agree, rule_override, llm, llm_calls, ...
    result: dict[str, Any]  # reflect: won, reward, grader_score, ..., learn_status


class EpisodeState(EpisodeInput, EpisodeOutput, total=False):
    env_episode_id: str
    starting_ids: list[str]
    max_steps: int
    max_actions: int
    weights_version: (
        int  # rule weights pinned at the start (0: shipped, -1: before any debrief; experience.py)
    )
    trace_yields: dict[str, float]  # members a member's pivot reveals, per trace, pinned
    llm_gain: float  # the LLM's expected gain from its credit, pinned at the start
    explore_rate: float  # share of steps the LLM is asked anyway (judged after the debrief)
    explore_report_weight: float  # ... times this before the first flag (credit.report_weight)
    llm_stake: int | None  # deciding LLM calls allowed this episode (None: no bound)
    insights: list[str]  # the task's active insights at the start, as put in the prompt
    lesson_ids: list[int]
    few_shot_thread: str | None
    action_count: int
    step_count: int
    steps_remaining: int
    done: bool
    view: ViewRecord  # observe
    rule: RuleRecord  # rule_check
    choices: list[str]  # rule_check: legal actions offered to the LLM
    llm: LlmRecord  # llm_decide
    llm_off: str  # llm_decide: set when the model timed out; not asked again in this episode
    decision: DecisionRecord  # arbitrate
    llm_verdicts: dict[str, str]  # arbitrate: account -> flag|unflag the LLM decided (kept)
    llm_flips: dict[str, int]  # arbitrate: account -> flags and unflags the LLM decided on it
    unflagged_ids: list[str]  # arbitrate: unflagged this episode (the rule never re-flags them)
    hypotheses: list[list]  # arbitrate: [account, step count] of each hypothesis flagged (engine)
    last: LastRecord  # step_env
    operator: dict[str, Any]  # step_env: an adaptive round's operator debrief, once it ended
