"""Action strings shared by the rules, the LLM prompts, the logs and the CLI.

An action is written `"<type> <account_id>"` (or just `"submit"`), e.g. `"flag u_1a2b3c"`, and a
pivot names its trace too: `"pivot u_1a2b3c ip"`. Short enough for prompts and logs, and trivially
parsed back.
"""

from __future__ import annotations

from fakegang_env.schema import ActionType
from fakegang_env.trace_catalogue import trace_names

VALID_TYPES = {t.value for t in ActionType}
PIVOT = ActionType.PIVOT.value


def format_action(action_type: str, account_id: str | None = None, trace: str | None = None) -> str:
    if account_id is None:
        return action_type
    return f"{action_type} {account_id}" if trace is None else f"{action_type} {account_id} {trace}"


def parse_step(text: str) -> tuple[str, str | None, str | None]:
    """Parse an action into what the environment's step takes: `("pivot", "u_1a2b3c", "ip")`,
    `("flag", "u_1a2b3c", None)`, `("submit", None, None)`; ValueError on anything else."""
    parts = text.strip().split()
    if not parts or parts[0].lower() not in VALID_TYPES:
        raise ValueError(f"not an action: {text!r} (expected one of {sorted(VALID_TYPES)})")
    action_type = parts[0].lower()
    if action_type == ActionType.SUBMIT.value:
        if len(parts) != 1:
            raise ValueError(f"submit takes no account id: {text!r}")
        return action_type, None, None
    if action_type == PIVOT:
        if len(parts) != 3:
            raise ValueError(f"pivot needs an account id and a trace: {text!r}")
        if parts[2] not in trace_names():
            raise ValueError(f"unknown trace in {text!r} (valid: {', '.join(trace_names())})")
        return action_type, parts[1], parts[2]
    if len(parts) != 2:
        raise ValueError(f"{action_type} needs exactly one account id: {text!r}")
    return action_type, parts[1], None


def parse_action(text: str) -> tuple[str, str | None]:
    """Parse `"flag u_1a2b3c"` into `("flag", "u_1a2b3c")` (a pivot into its type and the account
    it pivots from: use `parse_step` to send it); raise ValueError on anything else."""
    action_type, account_id, _ = parse_step(text)
    return action_type, account_id


def log_form(action: str) -> str:
    """The original script's action-log spelling: `FLAG u_1a2b3c` (`PIVOT u_1a2b3c ip`)."""
    return format_action(*_upper(parse_step(action)))


def _upper(step: tuple[str, str | None, str | None]) -> tuple[str, str | None, str | None]:
    return step[0].upper(), step[1], step[2]
