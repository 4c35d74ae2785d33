"""Action strings shared by the rules, the LLM prompts, the logs and the CLI.

An action is written `"<type> <account_id>"` (or just `"submit"`), e.g. `"flag u_1a2b3c"`: short
enough for prompts and logs, and trivially parsed back.
"""

from __future__ import annotations

from fakegang_env.schema import ActionType

VALID_TYPES = {t.value for t in ActionType}


def format_action(action_type: str, account_id: str | None = None) -> str:
    return action_type if account_id is None else f"{action_type} {account_id}"


def parse_action(text: str) -> tuple[str, str | None]:
    """Parse `"flag u_1a2b3c"` into `("flag", "u_1a2b3c")`; raise ValueError on anything else."""
    parts = text.strip().split()
    if not parts or parts[0].lower() not in VALID_TYPES:
        raise ValueError(f"not an action: {text!r} (expected one of {sorted(VALID_TYPES)})")
    action_type = parts[0].lower()
    if action_type == ActionType.SUBMIT.value:
        if len(parts) != 1:
            raise ValueError(f"submit takes no account id: {text!r}")
        return action_type, None
    if len(parts) != 2:
        raise ValueError(f"{action_type} needs exactly one account id: {text!r}")
    return action_type, parts[1]


def log_form(action: str) -> str:
    """The original script's action-log spelling: `FLAG u_1a2b3c`."""
    action_type, account_id = parse_action(action)
    return format_action(action_type.upper(), account_id)
