"""Deterministic stand-in chat model (`--model fake`): no network, no weights, instant.

It is *not* an LLM.  Tests and quick runs use it to exercise the agent's LLM path end to end:
- a decision request (a `response_format` JSON schema whose `action` property is an enum) gets a
  JSON answer choosing one of the enum values from a hash of (seed, prompt text), so the same
  seed and prompt always give the same action; `submit` is only chosen when it is the only
  choice, so the stand-in never ends an episode on its own;
- any other request (a reflection) gets text built from the episode facts found in the prompt
  (outcome, steps used, the terminal message line), prefixed with "[stand-in]".
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fakegang.tools.models.json_structured import JsonSchemaChatModel

STAND_IN_PREFIX = "[stand-in]"


def _message_text(message: BaseMessage) -> str:
    return message.text if hasattr(message, "text") else str(message.content)


def enum_from_schema(schema: dict[str, Any]) -> list[str]:
    """The allowed values of the schema's `action` property (enum or const), else []."""
    action = schema.get("properties", {}).get("action", {})
    if "enum" in action:
        return [str(v) for v in action["enum"]]
    if "const" in action:
        return [str(action["const"])]
    return []


def pick_choice(seed: int, prompt: str, choices: list[str]) -> str:
    """Deterministic choice from (seed, prompt); avoids `submit` unless it is the only one."""
    candidates = [c for c in choices if c.split(" ", 1)[0].lower() != "submit"] or list(choices)
    digest = hashlib.sha256(f"{seed}\x00{prompt}".encode()).digest()
    return candidates[int.from_bytes(digest[:8], "big") % len(candidates)]


_OUTCOME_RE = re.compile(r"\b(WIN|WON|LOSS|LOST)\b", re.IGNORECASE)
_STEPS_USED_RE = re.compile(r"steps[ _]used\W{0,3}(\d+(?:[ \t]*(?:of|/)[ \t]*\d+)?)", re.IGNORECASE)
_N_STEPS_RE = re.compile(r"(?<![\d.])(\d+)[ \t]*(?:/[ \t]*\d+[ \t]*)?steps\b", re.IGNORECASE)
_MESSAGE_RE = re.compile(
    r"^\s*(?:result|final[ _]message|terminal[ _]message|final[ _]msg)\s*[:=]\s*(.+)$",
    re.IGNORECASE | re.MULTILINE,
)


def stand_in_reflection(prompt: str) -> str:
    """A short reflection quoting the facts present in `prompt` (never invents numbers)."""
    outcome_match = _OUTCOME_RE.search(prompt)
    outcome = None
    if outcome_match:
        outcome = "WIN" if outcome_match.group(1).upper() in {"WIN", "WON"} else "LOSS"
    steps_match = _STEPS_USED_RE.search(prompt) or _N_STEPS_RE.search(prompt)
    steps = steps_match.group(1) if steps_match else None
    message_match = _MESSAGE_RE.search(prompt)
    message = message_match.group(1).strip().strip("\"'") if message_match else None

    parts = [STAND_IN_PREFIX]
    parts.append(f"Episode outcome: {outcome}." if outcome else "Episode outcome not stated.")
    if steps:
        parts.append(f"Steps used: {steps}.")
    if message:
        parts.append(f'Terminal message: "{message[:160]}".')
    if outcome == "WIN":
        parts.append("Keep the same order: confirm the strongest evidence first, then submit.")
    else:
        parts.append(
            "Next time: inspect the accounts with the strongest shared evidence first and "
            "flag only confirmed members before submitting."
        )
    return " ".join(parts)


class FakeChatModel(JsonSchemaChatModel):
    """Deterministic stand-in; see the module docstring."""

    seed: int = 0
    delay_s: float = 0.0  # tests use it to simulate a slow model

    @property
    def _llm_type(self) -> str:
        return "fakegang-stand-in"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay_s:
            time.sleep(self.delay_s)
        prompt = "\n".join(_message_text(m) for m in messages)
        response_format = kwargs.get("response_format") or {}
        choices = enum_from_schema(response_format.get("schema") or {})
        if choices:
            action = pick_choice(self.seed, prompt, choices)
            text = json.dumps(
                {"action": action, "reason": f"{STAND_IN_PREFIX} hash pick among {len(choices)}"}
            )
        else:
            text = stand_in_reflection(prompt)
            max_tokens = kwargs.get("max_tokens")
            if max_tokens:  # honour the token cap roughly: ~1 word per token
                text = " ".join(text.split()[: int(max_tokens)])
        message = AIMessage(content=text, response_metadata={"model_name": "stand-in"})
        return ChatResult(generations=[ChatGeneration(message=message)])
