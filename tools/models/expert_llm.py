"""`--model expert:P`: a simulated expert, a test double for the rule/LLM arbitration.

With probability P it answers what an oracle would pick among the legal choices (the highest
`tools.credit.action_value` given the ring), otherwise a uniformly random legal choice; both draws
come from a hash of (seed, prompt), so the same prompt always gets the same answer.

It cheats by design: it reads the episode's truth from the *embedded* environment server's
episode registry (same process), finding the episode by the LangGraph thread id that LangChain
hands to the model in its run metadata (the env episode id is the thread id). Against a remote
server it has no truth and every call fails with a clear error, so the rule action stands.
It is never a default.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fakegang.tools.learning.credit import action_value, page_new_members
from fakegang.tools.models.fake_llm import _message_text, enum_from_schema, stand_in_reflection
from fakegang.tools.models.json_structured import JsonSchemaChatModel
from fakegang.tools.rules.actions import parse_step
from fakegang_env.traces import PAGE_SIZE

PREFIX = "[expert]"


class ExpertUnavailable(RuntimeError):
    """The expert cannot see the episode's truth (not the embedded server, or no thread id)."""


def parse_expert_spec(spec: str) -> float:
    """P from 'expert:P'; a clear ValueError for anything else."""
    _, _, raw = spec.partition(":")
    try:
        p = float(raw)
    except ValueError as exc:
        raise ValueError(f"--model expert:P needs P in [0, 1], got {raw!r}") from exc
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"--model expert:P needs P in [0, 1], got {p}")
    return p


def embedded_episode(episode_id: str) -> Any:
    """The engine episode held by this process's environment server."""
    from fakegang_env.in_process import EpisodeNotServedHere, served_episode

    try:
        return served_episode(episode_id)
    except EpisodeNotServedHere as exc:
        raise ExpertUnavailable(
            f"expert:P cannot see the truth of episode {episode_id!r} ({exc}): it only works "
            "with the embedded environment (no --env-url)"
        ) from exc


def oracle_choice(episode: Any, choices: list[str]) -> str:
    """The best legal choice given the truth (first one on ties, menus list the rule's first)."""
    ring = set(episode.network.gang_ids)
    obs = episode.observation()
    flagged = set(obs["flagged_ids"])
    inspected = set(obs["inspected_ids"])
    recall = episode.task_spec.win_recall

    def value(choice: str) -> float:
        kind, account, trace = parse_step(choice)
        new = None
        if kind == "pivot" and account and trace and episode.network.traces is not None:
            # valued as the debrief judges a pivot; counting members not yet *visible* instead,
            # the oracle passed over pivots the judge then counted against it
            net = episode.network
            page = net.traces.matches(net, trace, account)[:PAGE_SIZE]
            new = page_new_members(page, ring, inspected, account)
        return action_value(choice, ring, flagged, recall, new)

    return max(choices, key=value)


def expert_choice(p: float, seed: int, prompt: str, choices: list[str], episode: Any) -> str:
    digest = hashlib.sha256(f"{seed}\x00{prompt}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < p:
        return oracle_choice(episode, choices)
    return choices[int.from_bytes(digest[8:16], "big") % len(choices)]


class ExpertChatModel(JsonSchemaChatModel):
    """See the module docstring."""

    p: float = 1.0
    seed: int = 0

    @property
    def _llm_type(self) -> str:
        return "fakegang-expert"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"p": self.p, "seed": self.seed}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = "\n".join(_message_text(m) for m in messages)
        response_format = kwargs.get("response_format") or {}
        choices = enum_from_schema(response_format.get("schema") or {})
        if not choices:
            text = stand_in_reflection(prompt).replace("[stand-in]", PREFIX, 1)
        else:
            metadata = getattr(run_manager, "metadata", None) or {}
            thread_id = metadata.get("thread_id")
            if not thread_id:
                raise ExpertUnavailable("expert:P got no thread id in the run metadata")
            episode = embedded_episode(str(thread_id))
            action = expert_choice(self.p, self.seed, prompt, choices, episode)
            text = json.dumps({"action": action, "reason": f"{PREFIX} P={self.p}"})
        message = AIMessage(content=text, response_metadata={"model_name": "expert"})
        return ChatResult(generations=[ChatGeneration(message=message)])
