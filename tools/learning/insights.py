"""Insights in words, ExpeL-style: what the refit changed and why, kept across episodes.

After each episode the agent compares the weights in force with the shipped ones, family of
evidence by family (shared proxies, content reuse, creation burst, ...), and reads the episode's
debrief (missed members, flagged innocents). Each observation is a *claim* with a stable key;
ExpeL's operations then edit the task's insight list (Zhao et al., AAAI-24):
- ADD a claim not in the list (importance 2);
- UPVOTE a claim made again (+1, text refreshed with the new numbers, capped);
- DOWNVOTE an active insight the episode no longer supports (−1);
- RETIRE it when its importance reaches 0.
Bounded: at most MAX_ACTIVE active insights per task (the least important are retired) and
MAX_RETIRED retired rows kept. Keyed by (task, key) and recorded per episode, so a re-run of
`reflect` does not vote twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from fakegang.tools.memory.store import Memory, utc_now

MAX_ACTIVE = 8
MAX_RETIRED = 20
MAX_IMPORTANCE = 6
WEAKER = 0.6  # a family counting for less than this share of its prior is "weaker"
STRONGER = 1.6

#: Evidence families: (profile features, frontier features, name, what a weaker weight means).
FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str, str]] = {
    "ip": (
        ("log_shared_ip", "core_ip"),
        ("ip_suspect",),
        "shared-IP evidence",
        "this operator does not share proxies (residential proxies or carrier NAT)",
    ),
    "content": (
        ("photo", "bio", "comment"),
        (),
        "content-reuse evidence (photos, bios, comments)",
        "this operator writes unique content (generated faces and text)",
    ),
    "age": (
        ("log_age", "core_age"),
        (),
        "account-age evidence",
        "this operator uses bought, aged accounts instead of a creation burst",
    ),
    "hour": (
        ("core_hour",),
        (),
        "posting-hour evidence",
        "this operator jitters its posting schedule",
    ),
    "density": (
        ("mutual_rate", "core_mutual", "partners"),
        (),
        "mutual-follow and lockstep-partner evidence",
        "this operator runs loose cells with few links inside the ring",
    ),
    "cofollow": (
        ("core_cofollow", "core_out"),
        (),
        "co-follow evidence",
        "this operator staggers its co-follows",
    ),
    "renames": (("name_changes",), (), "rename evidence", "this operator rarely renames"),
    "pointing": (
        (),
        ("in_likely", "in_likely_max", "frac_likely"),
        "'followed by likely members' exploration evidence",
        "members are not where likely members point",
    ),
}


@dataclass(frozen=True)
class Insight:
    id: int
    task: str
    key: str
    text: str
    importance: int
    status: str


def _strength(weights: dict[str, float], names: tuple[str, ...]) -> float:
    return sum(abs(weights.get(n, 0.0)) for n in names)


def weight_claims(
    prior: dict[str, dict[str, float]], current: dict[str, dict[str, float]]
) -> dict[str, str]:
    """key -> sentence for every evidence family whose weight moved well away from its prior."""
    claims: dict[str, str] = {}
    for fam, (prof, front, name, weaker_means) in FAMILIES.items():
        before = _strength(prior["profile"], prof) + _strength(prior["frontier"], front)
        after = _strength(current["profile"], prof) + _strength(current["frontier"], front)
        if before < 1e-6:
            continue
        ratio = after / before
        if ratio < WEAKER:
            claims[f"{fam}:weaker"] = (
                f"{name.capitalize()} now counts for {ratio:.0%} of its prior: {weaker_means}; "
                "do not flag on it alone."
            )
        elif ratio > STRONGER:
            claims[f"{fam}:stronger"] = (
                f"{name.capitalize()} now counts {ratio:.1f}x its prior: this operator leaves it "
                "strongly; trust it more."
            )
    return claims


def learner_claims(learner: dict | None) -> dict[str, str]:
    """The learner's reading of the current operator, one claim per trait it names, and the
    drift test's verdict when it cut off an old regime (tools/learning/operator_model.py)."""
    if not learner:
        return {}
    claims: dict[str, str] = {}
    sentence = learner.get("insight")
    if sentence:
        claims["operator:now"] = sentence[0].upper() + sentence[1:] + "."
    drift = learner.get("drift") or {}
    if learner.get("regime_episodes", 0) and drift.get("after", 0) > drift.get("before", 0) > 0:
        claims["operator:moved"] = (
            f"The operator changed tactics {learner['regime_episodes']} episode(s) ago (the "
            f"model's error rose from {drift['before']:.2f} to {drift['after']:.2f}): older "
            "cases count less."
        )
    return claims


def outcome_claims(fn: int | None, fp: int | None, won: bool) -> dict[str, str]:
    """Claims from the debrief of one episode (the reflection's facts)."""
    claims: dict[str, str] = {}
    if fn:
        claims["outcome:missed"] = (
            f"The last case missed {fn} ring member(s): keep inspecting the accounts the "
            "confirmed members follow before submitting."
        )
    if fp:
        claims["outcome:false_flags"] = (
            f"The last case flagged {fp} innocent account(s): require agreeing signals before "
            "flagging."
        )
    if won and not fn and not fp:
        claims["outcome:clean"] = "The current evidence weights solved the last case cleanly."
    return claims


def _row(r: dict) -> Insight:
    return Insight(r["id"], r["task"], r["key"], r["text"], r["importance"], r["status"])


def active(memory: Memory, task: str, n: int = MAX_ACTIVE) -> list[Insight]:
    """The task's active insights, most important first."""
    return [
        _row(r)
        for r in memory.db.query(
            "select * from insights where task = ? and status = 'active' "
            "order by importance desc, id limit ?",
            [task, n],
        )
    ]


def all_insights(memory: Memory, task: str | None = None) -> list[Insight]:
    where, args = ("where task = ?", [task]) if task else ("", [])
    return [
        _row(r) for r in memory.db.query(f"select * from insights {where} order by task, id", args)
    ]


#: Per-episode vote reports kept for re-runs of reflect (the newest ones).
VOTES_KEPT = 64


def update(memory: Memory, task: str, thread_id: str, claims: dict[str, str]) -> dict[str, int]:
    """Apply ADD/UPVOTE/DOWNVOTE/RETIRE for one episode's claims; counts of each operation."""
    ops = {"added": 0, "upvoted": 0, "downvoted": 0, "retired": 0}
    if memory.read_only:
        return ops
    now = utc_now()
    with memory.write_transaction():
        rows = {r["key"]: r for r in memory.db.query("select * from insights where task=?", [task])}
        if any(r["last_thread"] == thread_id for r in rows.values()):
            # this episode already voted (a re-run of reflect after a kill): report what it did
            done = list(
                memory.db.query("select ops from insight_votes where thread_id=?", [thread_id])
            )
            return json.loads(done[0]["ops"]) if done else ops
        table = memory.db["insights"]
        for key, text in claims.items():
            r = rows.get(key)
            if r is None or r["status"] == "retired":
                values = dict(text=text, importance=2, status="active", updated_at=now)
                values["last_thread"] = thread_id
                if r is None:
                    table.insert({"task": task, "key": key, "created_at": now, **values})
                else:
                    table.update(r["id"], values)
                ops["added"] += 1
            else:
                importance = min(MAX_IMPORTANCE, r["importance"] + 1)
                table.update(
                    r["id"],
                    dict(text=text, importance=importance, updated_at=now, last_thread=thread_id),
                )
                ops["upvoted"] += 1
        for key, r in rows.items():
            if key in claims or r["status"] != "active":
                continue
            importance = r["importance"] - 1
            status = "retired" if importance <= 0 else "active"
            table.update(
                r["id"],
                dict(
                    importance=max(0, importance),
                    status=status,
                    updated_at=now,
                    last_thread=thread_id,
                ),
            )
            ops["retired" if status == "retired" else "downvoted"] += 1
        _bound(memory, task, now)
        votes = memory.db["insight_votes"]
        votes.upsert({"thread_id": thread_id, "ops": json.dumps(ops), "at": now}, pk="thread_id")
        # bounded: the status of a re-run is only needed for the episode being re-run; `at` has
        # one-second resolution, so insertion order breaks ties (the newest reports stay)
        memory.trim("insight_votes", key="thread_id", order="at desc, rowid desc", keep=VOTES_KEPT)
    return ops


def _bound(memory: Memory, task: str, now: str) -> None:
    """Retire the least important active insights beyond MAX_ACTIVE; keep MAX_RETIRED retired."""
    extra = memory.keys_beyond(
        "insights",
        key="id",
        where="task = ? and status = 'active'",
        args=[task],
        order="importance desc, id",
        keep=MAX_ACTIVE,
    )
    for insight_id in extra:
        memory.db["insights"].update(insight_id, {"status": "retired", "updated_at": now})
    memory.trim(
        "insights",
        key="id",
        where="task = ? and status = 'retired'",
        args=[task],
        order="updated_at desc, id desc",
        keep=MAX_RETIRED,
    )
