"""The `GET /tasks` document: tasks, budgets, win rules, evasion schedule and the action schema.

Built from `tasks.py` and `schema.py` only, so it never disagrees with the engine's constants.
"""

from __future__ import annotations

from typing import Any

from fakegang_env.schema import STEP_COST, STEP_REWARD, ActionFields, ActionType
from fakegang_env.tactics import GENERATION_NOTES, GENERATIONS, MIXED
from fakegang_env.tasks import TASKS

_ACTION_RULES: dict[ActionType, str] = {
    ActionType.INSPECT: "id must be visible; reveals its profile and adds its follows to the "
    "visible set",
    ActionType.INVESTIGATE_NETWORK: "id must be visible; reveals the ids within 2 hops (both "
    "directions), no profiles",
    ActionType.FLAG: "id must be visible; marks it as a gang member; visible accounts it follows "
    "and visible accounts on its IP become suspects",
    ActionType.UNFLAG: "removes the flag",
    ActionType.SUBMIT: "ends the episode and scores it",
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
                "rule": _ACTION_RULES[kind],
            }
            for kind in ActionType
        ],
        "tactics": tactics_catalog(),
        "action_schema": ActionFields.model_json_schema(),
        "terminal_reward": "+1.0*TP - 0.5*FP - 0.3*FN; win +5.0 (+3.0 more if every member is "
        "found); recall met but precision not +2.0; +1.0 if submitted with at least half the "
        "budget left; forced submit (budget exhausted) -2.0",
        "grader": "win: 0.55 + 0.20*recall + 0.15*precision + 0.10*steps_remaining/max_steps; "
        "otherwise 0.30*recall + 0.10*precision",
        "http": {
            "reset": 'POST /reset {"task", "seed"?, "episode_id"?, "tactics"?, '
            '"campaign"? + "round"? (instead of seed)}',
            "step": 'POST /step {"action": {"action_type", "account_id"?}, "episode_id"?, '
            '"action_index"?}',
            "state": "GET /state?episode_id=...",
            "grader": "GET /grader?episode_id=...",
        },
    }


def tactics_catalog() -> list[dict[str, Any]]:
    """The generations (with their public channel strengths) and `mixed`, one line each.

    A named generation's strengths are public (the client picked it); what stays hidden is
    which playbook a campaign round or a `mixed` seed plays.
    """
    rows: list[dict[str, Any]] = [
        {"name": name, "description": GENERATION_NOTES[name], "channels": dict(pb.channels)}
        for name, pb in GENERATIONS.items()
    ]
    rows.append({"name": MIXED, "description": GENERATION_NOTES[MIXED], "channels": None})
    return rows
