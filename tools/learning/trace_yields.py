"""Trace yields learned from debriefs: how many ring members a pivot from a member reveals, per
trace, for the operator the task faces now.

After each episode the debrief (the ring's ids) tells, for every pivot the agent ran, how many
members and innocents its page held. A pivot from a member on trace `t` whose value `total`
accounts share, with `m` members among the `k` on its page, says the value holds about
`m / k · total` members: one observation of the trace's yield. The task's yield of `t` is the
recency-weighted mean of those observations over its last YIELD_WINDOW episodes, with a prior
worth PRIOR_PIVOTS pivots: the shipped (classic) yield times the strength the tactics estimate
gives the trace's channel (tools/learning/tactics_model.py, via the pinned weights version), or
the shipped yield when the debriefs show no drift.

One row per (episode, trace), keyed by the episode's thread id, so a re-run of `reflect` after a
kill rewrites the same rows; bounded to the task's last MAX_EPISODES episodes. An episode pins the
yields in force at its start (`trace_yields` in its state), like the refit weights, so resume,
replay and fork make the same pivots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fakegang.tools.learning import refit
from fakegang.tools.memory.store import Memory, utc_now
from fakegang.tools.rules.pivots import shipped_yields
from fakegang_env.trace_catalogue import trace_kind, trace_kinds
from fakegang_env.traces import TRACES

#: Episodes whose pivots the yields are learned from (recency-weighted, refit's half-life).
YIELD_WINDOW = 8
#: Episodes of a task the table keeps (for the report's history); rows = MAX_EPISODES x traces.
MAX_EPISODES = 64
#: The prior yield is worth this many pivots.
PRIOR_PIVOTS = 1.0
#: A yield below this share of the shipped one is a trace that now returns crowds.
CROWD_SHARE = 0.4


@dataclass(frozen=True)
class TraceRecord:
    """One episode's pivots on one trace, judged by its debrief."""

    trace: str
    pivots: int = 0
    members: float = 0.0
    page_members: int = 0
    page_innocents: int = 0


def judge_pivots(pivots: Iterable, ring: set[str]) -> dict[str, TraceRecord]:
    """Per trace: the episode's pivots from ring members and what their pages held. `pivots`
    are the terminal observation's (PivotResult models or dicts)."""
    acc = {t: [0, 0.0, 0, 0] for t in TRACES}
    for p in pivots:
        p = p if isinstance(p, dict) else p.model_dump()
        if p["account_id"] not in ring or p["trace"] not in acc:
            continue
        page = p["account_ids"]
        hits = sum(a in ring for a in page)
        row = acc[p["trace"]]
        row[0] += 1
        row[1] += hits / len(page) * p["total"] if page else 0.0
        row[2] += hits
        row[3] += len(page) - hits
    return {t: TraceRecord(t, r[0], round(r[1], 3), r[2], r[3]) for t, r in acc.items()}


def prior(task: str, tactics: Mapping[str, Mapping[str, float]] | None) -> dict[str, float]:
    """The shipped yields, scaled by the tactics estimate's channel strengths when there is
    one (a weights version's `tactics`: {"strength": {channel: s}, "sd": ...})."""
    base = shipped_yields(task)
    if not tactics:
        return base
    strength = tactics.get("strength", {})
    return {t: round(y * strength.get(trace_kind(t).channel, 1.0), 3) for t, y in base.items()}


def _threads(memory: Memory, task: str) -> list[str]:
    """The task's episodes with yield rows, oldest first."""
    return memory.task_threads("trace_yields", task)


def estimate(
    memory: Memory, task: str, tactics: Mapping[str, Mapping[str, float]] | None = None
) -> dict[str, float]:
    """The task's yields now: recent debriefed pivots on top of the prior (see module doc)."""
    base = prior(task, tactics)
    threads = _threads(memory, task)[-YIELD_WINDOW:]
    if not threads:
        return base
    age = {t: len(threads) - 1 - i for i, t in enumerate(threads)}
    num = {t: PRIOR_PIVOTS * base[t] for t in TRACES}
    den = dict.fromkeys(TRACES, PRIOR_PIVOTS)
    marks = ",".join("?" * len(threads))
    for r in memory.db.query(
        f"select thread_id, trace, pivots, members from trace_yields "
        f"where task = ? and thread_id in ({marks})",
        [task, *threads],
    ):
        if r["trace"] not in num or not r["pivots"]:
            continue
        w = refit.recency_weight(age[r["thread_id"]])
        num[r["trace"]] += w * r["members"]
        den[r["trace"]] += w * r["pivots"]
    return {t: round(num[t] / den[t], 3) for t in TRACES}


def record(
    memory: Memory,
    task: str,
    thread_id: str,
    records: Mapping[str, TraceRecord],
    tactics: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, float]:
    """Upsert one episode's rows (one per trace), trim the task to MAX_EPISODES episodes, and
    return the yields estimated after it (stored with the rows, for the report)."""
    if memory.read_only:
        return estimate(memory, task, tactics)
    with memory.write_transaction():
        created = {
            r["trace"]: r["created_at"]
            for r in memory.db.query(
                "select trace, created_at from trace_yields where thread_id = ?", [thread_id]
            )
        }
        now = utc_now()
        rows = [
            {
                "key": f"{thread_id}:{t}",
                "thread_id": thread_id,
                "task": task,
                "trace": t,
                "pivots": rec.pivots,
                "members": rec.members,
                "page_members": rec.page_members,
                "page_innocents": rec.page_innocents,
                "estimate": None,
                "created_at": created.get(t, now),
            }
            for t in TRACES
            for rec in [records.get(t, TraceRecord(t))]
        ]
        memory.db["trace_yields"].upsert_all(rows, pk="key")
        after = estimate(memory, task, tactics)
        for t in TRACES:
            memory.db["trace_yields"].update(f"{thread_id}:{t}", {"estimate": after[t]})
        memory.trim(
            "trace_yields",
            key="key",
            where="task = ?",
            args=[task],
            order="created_at desc, rowid desc",
            keep=MAX_EPISODES * len(TRACES),
        )
    return after


def history(memory: Memory, task: str | None = None) -> list[dict]:
    """Every stored row, oldest first (the report's yields over episodes)."""
    where, args = ("where task = ?", [task]) if task else ("", [])
    return list(
        memory.db.query(f"select * from trace_yields {where} order by created_at, rowid", args)
    )


def crowd_claims(task: str, yields: Mapping[str, float]) -> dict[str, str]:
    """Insights in words for the traces whose yield fell to a crowd's (each kind's label and
    crowd reason come from the trace catalogue)."""
    base = shipped_yields(task)
    claims = {}
    for kind in trace_kinds():
        t = kind.name
        y = yields.get(t)
        if y is not None and base.get(t) and y < CROWD_SHARE * base[t]:
            claims[f"pivot:{t}:crowds"] = (
                f"{kind.label} pivots now return crowds (about {y:.1f} members per pivot from a "
                f"member, {base[t]:.0f} on a classic ring): {kind.crowd_reason}; pivot on other "
                "traces."
            )
    return claims
