"""Reading a chat model's answer: reasoning stripped, the decision parsed (structured output
first; this module is the fallback for prose, tool calls and JSON cut off by the token cap).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field, create_model

__all__ = [
    "REASON_MAX_CHARS",
    "decision_schema",
    "message_text",
    "parse_decision",
    "strip_reasoning",
]

REASON_MAX_CHARS = 200
_THINK_RE = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """Drop <think>...</think> blocks (an unclosed one runs to the end of the text)."""
    return _THINK_RE.sub("", text or "").strip()


def message_text(message: Any) -> str:
    """Visible answer text: text blocks only (reasoning blocks excluded), thinking stripped."""
    if isinstance(message, BaseMessage):
        return strip_reasoning(message.text)
    return strip_reasoning(str(message or ""))


def _norm(text: str) -> str:
    return " ".join(str(text).lower().strip().strip("\"'`.,;:!").split())


@functools.lru_cache(maxsize=256)
def decision_schema(choices: tuple[str, ...]) -> type[BaseModel]:
    """Pydantic model {action: Literal[choices], reason: str<=200} (cached per choice set)."""
    action_type = Literal.__getitem__(choices)
    return create_model(
        "Decision",
        __doc__="The next action to take and a one-line reason.",
        action=(action_type, Field(description="exactly one of the allowed actions")),
        reason=(str, Field(max_length=REASON_MAX_CHARS, description="one short line")),
    )


def _action_from_obj(obj: Any, by_norm: dict[str, str]) -> str | None:
    if not isinstance(obj, dict):
        return None
    action = obj.get("action")
    if not isinstance(action, str):
        return None
    found = by_norm.get(_norm(action))
    if found:
        return found
    # {"action": "flag", "id": "u_1"} style answers
    for key in ("id", "account_id", "target", "user_id", "target_id"):
        if isinstance(obj.get(key), str):
            found = by_norm.get(_norm(f"{action} {obj[key]}"))
            if found:
                return found
    return None


def _json_objects(text: str) -> list[Any]:
    objs = []
    with contextlib.suppress(ValueError):
        objs.append(json.loads(text))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        with contextlib.suppress(ValueError):
            objs.append(json.loads(text[start : end + 1]))
    return objs


_REASON_RE = re.compile(r'"reason"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)
_ACTION_RE = re.compile(r'"action"\s*:\s*"([^"]*)"')


def parse_decision(message: Any, choices: list[str]) -> tuple[str | None, str]:
    """Fallback parse of an answer that structured output did not parse: tool-call args, a JSON
    object in the text, the `"action": "..."` field of a JSON answer cut off by the token cap, or
    a visible answer that is exactly one choice. A choice merely *mentioned* in prose is never
    taken for the answer (the original script's parser submitted whenever "SUBMIT" appeared in
    reasoning).
    """
    by_norm = {_norm(c): c for c in choices}
    candidates: list[Any] = [tc.get("args") for tc in getattr(message, "tool_calls", None) or []]
    text = message_text(message)
    candidates.extend(_json_objects(text))
    for obj in candidates:
        action = _action_from_obj(obj, by_norm)
        if action:
            reason = obj.get("reason", "") if isinstance(obj.get("reason"), str) else ""
            return action, reason[:REASON_MAX_CHARS]
    field = _ACTION_RE.search(text)
    if field and _norm(field.group(1)) in by_norm:
        match = _REASON_RE.search(text)
        return by_norm[_norm(field.group(1))], (match.group(1) if match else "")[:REASON_MAX_CHARS]
    whole = by_norm.get(_norm(text))
    if whole:
        return whole, ""
    return None, ""
