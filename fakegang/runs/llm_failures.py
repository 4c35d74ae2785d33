"""What went wrong with a run's LLM calls, said at its end (and in `fakegang report`).

An LLM call never ends an episode (tools/models/llm.py): a failed decision leaves the rule's
action, a failed reflection leaves a lesson built from the facts. That keeps runs alive but made
failures silent: a run with no reachable model exited 0 printing only `llm_calls=2`. The calls
are recorded in the database (decisions in `steps`: llm_status, llm_error, llm_error_class;
reflections on the episode row: reflection_call, reflection_error, reflection_error_class), and
this module counts them per error class for one run: one line per class, and with `verbose`
one line per failed call.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fakegang.graph.state import BENCHED_REASON


@dataclass(frozen=True)
class FailedCall:
    episode: int
    where: str  # "action #5" or "reflection"
    error_class: str
    error: str


@dataclass
class LLMFailures:
    """A run's LLM calls: how many were made, which failed, and what the run did instead."""

    decide_calls: int = 0
    reflect_calls: int = 0
    failed: list[FailedCall] = field(default_factory=list)
    benched_episodes: int = 0  # episodes where the model was not asked again after a timeout

    @property
    def calls(self) -> int:
        return self.decide_calls + self.reflect_calls

    def lines(self, *, verbose: bool = False) -> list[str]:
        """One line per error class with counts (nothing when every call answered); with
        `verbose`, each failed call under it."""
        if not self.failed:
            return []
        by_class = Counter(f.error_class for f in self.failed)
        out = []
        for error_class, n in by_class.most_common():
            mine = [f for f in self.failed if f.error_class == error_class]
            out.append(
                f"{n} of {self.calls} LLM calls failed ({error_class}): {_effect(mine, self)}"
            )
            if verbose:
                out += [f"    episode {f.episode} {f.where}: {f.error}" for f in mine]
        if self.benched_episodes:
            out.append(
                f"after a timeout the model was not asked again in {self.benched_episodes} "
                f"episode{'s' * (self.benched_episodes != 1)} (the rules decided the rest)"
            )
        return out


def _effect(failed: list[FailedCall], summary: LLMFailures) -> str:
    decisions = sum(f.where != "reflection" for f in failed)
    reflections = len(failed) - decisions
    parts = []
    if decisions:
        every = decisions == summary.decide_calls
        parts.append("the rules decided every step" if every else "the rules decided those steps")
    if reflections:
        parts.append(f"{reflections} lesson{'s' * (reflections != 1)} built from the facts")
    return ", ".join(parts)


def run_llm_failures(conn: Any, run_id: str) -> LLMFailures:
    """Count the LLM calls of `run_id` from the database (`conn.execute` of sqlite3 or
    sqlite-utils)."""
    summary = LLMFailures()
    for episode, idx, status, error, cls in conn.execute(
        "select e.episode, s.idx, s.llm_status, s.llm_error, s.llm_error_class from steps s "
        "join episodes e on e.thread_id = s.thread_id where e.run_id = ? "
        "and s.llm_status in ('ok', 'error') order by e.episode, s.idx",
        [run_id],
    ):
        summary.decide_calls += 1
        if status == "error":
            summary.failed.append(FailedCall(episode or 0, f"action #{idx}", cls, error))
    summary.benched_episodes = conn.execute(
        "select count(distinct s.thread_id) from steps s join episodes e "
        "on e.thread_id = s.thread_id where e.run_id = ? and s.llm_status = 'skipped' "
        "and s.llm_reason like ?",
        [run_id, BENCHED_REASON + "%"],
    ).fetchone()[0]
    for episode, call, error, cls in conn.execute(
        "select episode, reflection_call, reflection_error, reflection_error_class "
        "from episodes where run_id = ? and reflection_call is not null order by episode",
        [run_id],
    ):
        if call == "skipped":  # not asked: the model timed out earlier in the episode
            continue
        summary.reflect_calls += 1
        if call == "error":
            summary.failed.append(FailedCall(episode or 0, "reflection", cls, error))
    return summary
