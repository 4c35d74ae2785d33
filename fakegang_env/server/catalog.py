"""The `GET /tasks` document: tasks, budgets, win rules, evasion schedule and the action schema.

Built from `tasks.py` and `schema.py` only, so it never disagrees with the engine's constants.
"""

from __future__ import annotations

from typing import Any

from fakegang_env.schema import STEP_COST, STEP_REWARD, ActionFields, ActionType
from fakegang_env.tactics import tactics_catalog
from fakegang_env.tasks import TASKS
from fakegang_env.trace_catalogue import trace_kinds
from fakegang_env.traces import PAGE_SIZE

_ACTION_RULES: dict[ActionType, str] = {
    ActionType.INSPECT: "id must be visible; reveals its profile and adds its follows to the "
    "visible set",
    ActionType.INVESTIGATE_NETWORK: "id must be visible; reveals the ids within 2 hops (both "
    "directions), no profiles",
    ActionType.FLAG: "id must be visible; marks it as a gang member; visible accounts it follows "
    "and visible accounts on its IP become suspects",
    ActionType.UNFLAG: "removes the flag",
    ActionType.SUBMIT: "ends the episode and scores it",
    ActionType.PIVOT: f"id must be inspected and `trace` one of `traces`; reveals up to "
    f"{PAGE_SIZE} of the other accounts sharing the id's current value of that trace, with the "
    "total count (observation `pivots`)",
}


def tasks_catalog() -> dict[str, Any]:
    """Everything a client needs to plan an episode, as one JSON-ready dict."""
    return {
        "tasks": [
            {
                "name": spec.name,
                "description": spec.description,
                "accounts": spec.n_accounts,
                "gang_size": {"min": spec.gang_min, "max": spec.gang_max},
                "max_steps": spec.max_steps,
                "starting_ids": spec.n_starting,
                "win_rule": {
                    "recall_at_least": spec.win_recall,
                    "precision_at_least": spec.win_precision,
                },
                "evasion_steps": list(spec.evasion_steps),
            }
            for spec in TASKS.values()
        ],
        "actions": [
            {
                "action_type": kind.value,
                "steps": STEP_COST[kind],
                "reward": STEP_REWARD[kind],
                "needs_account_id": kind is not ActionType.SUBMIT,
                "needs_trace": kind is ActionType.PIVOT,
                "rule": _ACTION_RULES[kind],
            }
            for kind in ActionType
        ],
        "tactics": tactics_catalog(),
        "traces": [
            {"name": k.name, "description": k.note, "channel": k.channel} for k in trace_kinds()
        ],
        "pivot_page_size": PAGE_SIZE,
        "action_schema": ActionFields.model_json_schema(),
        "terminal_reward": "+1.0*TP - 0.5*FP - 0.3*FN; win +5.0 (+3.0 more if every member is "
        "found); recall met but precision not +2.0; +1.0 if submitted with at least half the "
        "budget left; forced submit (budget exhausted) -2.0",
        "grader": "win: 0.55 + 0.20*recall + 0.15*precision + 0.10*steps_remaining/max_steps; "
        "otherwise 0.30*recall + 0.10*precision",
        "http": {
            "reset": 'POST /reset {"task", "seed"?, "episode_id"?, "tactics"?, '
            '"campaign"? + "round"? (instead of seed)}',
            "step": 'POST /step {"action": {"action_type", "account_id"?, "trace"?}, '
            '"episode_id"?, "action_index"?}',
            "state": "GET /state?episode_id=...",
            "grader": "GET /grader?episode_id=...",
        },
    }
