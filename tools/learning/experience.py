"""Labelled experience and versioned rule weights, in the agent's memory database (sqlite-utils).

After each episode `reflect` stores the evidence vectors of the accounts the episode saw, labelled
by the debrief (the terminal observation's `ring_ids`), then refits the rule weights from the
task's recent experience (tools/learning/refit.py) and stores the result as a new *version*. An
episode pins the version in force when it starts (`weights_version` in its state), so resume, replay
and fork score every step with the same weights the original run used.

Bounded: experience keeps the last MAX_EXPERIENCE_EPISODES episodes of a task, weight versions
the last MAX_VERSIONS_PER_TASK of a task (an episode pinned to a pruned version is refused with a
clear error, never silently rescored). Every write is keyed by the episode's thread id, so a
re-run of `reflect` after a kill rewrites the same rows.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any

from fakegang.tools.learning import drift, operator_model, refit, tactics_model
from fakegang.tools.learning.operator_model import OperatorModel
from fakegang.tools.memory.store import Memory, utc_now
from fakegang.tools.rules.engine import load_weights, logistic
from fakegang.tools.rules.evidence import CaseView, frontier_features, profile_features
from fakegang_env.schema import PlainObservation

MAX_EXPERIENCE_EPISODES = 12
MAX_VERSIONS_PER_TASK = 2000
#: Learners (their fitted trees) kept per task: the newest versions' (about 20 KB each).
MAX_MODELS_PER_TASK = 300
#: Frontier rows per episode (visible accounts scored from who points at them), sampled by id.
FRONTIER_ROWS = 120
SHIPPED_VERSION = 0
#: The version a learning episode pins before any debrief of its task: the evidence model of an
#: operator whose tactics are not known yet (see `unknown_operator_version`). Never stored.
UNKNOWN_OPERATOR_VERSION = -1


class WeightsVersionError(LookupError):
    """An episode is pinned to a weights version this database no longer (or never) held."""


@dataclass(frozen=True)
class WeightsVersion:
    version: int
    task: str
    profile: dict[str, float]
    frontier: dict[str, float]
    thread_id: str | None
    n_rows: int
    n_episodes: int
    #: the operator's tactics the debriefs show ({"strength": ..., "sd": ...} per channel,
    #: tools/learning/tactics_model.py); None while the shipped weights still explain them (no
    #: drift) or the task has no tactics model
    tactics: dict[str, dict[str, float]] | None = None
    #: the learner of the current operator (tools/learning/operator_model.py); None for the
    #: shipped and unknown-operator versions, and when the debriefs held one class only
    model: OperatorModel | None = field(default=None, compare=False)
    #: what the learner read once the debriefs showed drift: the drift test's cut, the traits'
    #: evidence and the sentence it makes of them (`_fit`)
    learner: dict[str, Any] | None = None

    def as_rule_weights(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "frontier": self.frontier,
            "flag": load_weights()["flag"],
            "profile_model": self.model,
        }


def shipped_version(task: str) -> WeightsVersion:
    w = load_weights()
    return WeightsVersion(SHIPPED_VERSION, task, w["profile"], w["frontier"], None, 0, 0)


def unknown_operator_version(task: str) -> WeightsVersion:
    """Where learning starts: the tactics model's profile model at the `mixed` mean strengths.

    The shipped profile model was fitted on the classic ring only; an agent that expects the
    operator to change tactics should not bet on the blatant one before its first debrief.
    Round 0 of training campaigns 100-159 (60 rounds each): hard `mixed` 0.78 won against 0.03
    with the shipped weights, medium `mixed` 0.77 against 0.03; the price is on classic rings,
    hard 0.98 against 0.98, medium 0.88 against 0.98 (seeds 160-259), paid until the first
    debrief, whose drift check keeps the shipped weights on a classic ring. A task without a
    tactics model starts from the shipped weights."""
    if not tactics_model.has_model(task):
        return shipped_version(task)
    profile = tactics_model.profile_weights(task, {})
    frontier = load_weights()["frontier"]
    return WeightsVersion(UNKNOWN_OPERATOR_VERSION, task, profile, frontier, None, 0, 0)


# ---------------------------------------------------------------------------------- experience
def labelled_rows(
    obs: PlainObservation, starting_ids: list[str], ring: set[str], weights: dict[str, Any]
) -> list[dict[str, Any]]:
    """Evidence vectors of the episode's terminal observation, labelled by the debrief.

    Profile rows: every inspected account as the engine meets it during an episode: before any
    flag (`profile0`: how the first member is recognised), against the first member it inspected
    alone (`profile1`: the core right after a first right flag, when most flags are decided; with
    at least two members inspected), and against the core of all the inspected members the
    debrief confirms (`profile`: how the last ones are). Without `profile1` the model learned
    core evidence at full-core strength and scored members under 0.5 next to a core of one: 23
    of 31 losses on hard `mixed` training playbooks left inspected members unflagged; with it,
    training campaigns 100-119 went from 0.30 to 0.38 (hard) and 0.26 to 0.305 (medium).
    Features against the agent's own final flags would teach a lost episode's mistakes (tried with
    the earlier, undamped fit: no better). Frontier rows: up to FRONTIER_ROWS visible
    accounts (all members first: the frontier is mostly innocents), scored from who points at
    them around the confirmed core; sorted by id so the sample is deterministic.
    """
    inspected = sorted(p.account_id for p in obs.visible_accounts)
    confirmed = [a for a in inspected if a in ring]
    no_core = CaseView.build(obs.model_copy(update={"flagged_ids": []}), starting_ids)
    core = CaseView.build(obs.model_copy(update={"flagged_ids": confirmed}), starting_ids)
    rows = [
        {"kind": "profile0", "account_id": a, "features": profile_features(no_core, a)}
        for a in inspected
    ]
    rows += [
        {"kind": "profile", "account_id": a, "features": profile_features(core, a)}
        for a in inspected
    ]
    first_member = next((a for a in obs.inspected_ids if a in ring), None)
    if len(confirmed) >= 2 and first_member is not None:
        one = CaseView.build(obs.model_copy(update={"flagged_ids": [first_member]}), starting_ids)
        rows += [
            {"kind": "profile1", "account_id": a, "features": profile_features(one, a)}
            for a in inspected
        ]
    likelihood = {a: logistic(weights["profile"], profile_features(core, a)) for a in inspected}
    visible = sorted(obs.visible_account_ids)
    members = [x for x in visible if x in ring]
    others = sorted(
        (x for x in visible if x not in ring),
        key=lambda x: hashlib.sha256(x.encode()).hexdigest(),
    )
    kept = others[: max(0, FRONTIER_ROWS - len(members))]
    # innocents are subsampled: weight them back up so the base rate stays the true one
    other_weight = len(others) / len(kept) if kept else 1.0
    rows += [
        {
            "kind": "frontier",
            "account_id": x,
            "features": frontier_features(core, x, likelihood),
            "weight": 1.0 if x in ring else other_weight,
        }
        for x in sorted(members + kept)
    ]
    for r in rows:
        r["label"] = int(r["account_id"] in ring)
        r.setdefault("weight", 1.0)
    return rows


def store_experience(memory: Memory, task: str, thread_id: str, rows: list[dict]) -> int:
    """Upsert one episode's labelled rows and drop the task's oldest episodes beyond the bound."""
    if memory.read_only:
        return 0
    now = utc_now()
    records = [
        {
            "thread_id": thread_id,
            "task": task,
            "kind": r["kind"],
            "account_id": r["account_id"],
            "features": json.dumps(r["features"], sort_keys=True),
            "label": r["label"],
            "weight": r["weight"],
            "created_at": now,
        }
        for r in rows
    ]
    with memory.write_transaction():  # the bound reads what it then deletes
        memory.db["experience"].upsert_all(records, pk=("thread_id", "kind", "account_id"))
        keep = experience_threads(memory, task)
        if len(keep) > MAX_EXPERIENCE_EPISODES:
            for old in keep[: len(keep) - MAX_EXPERIENCE_EPISODES]:
                memory.db.execute("delete from experience where thread_id = ?", [old])
    return len(records)


def experience_threads(memory: Memory, task: str) -> list[str]:
    """Thread ids of a task's stored experience, oldest first (by first insertion)."""
    return memory.task_threads("experience", task)


def experience_rows(
    memory: Memory,
    task: str,
    kind: str,
    threads: list[str] | None = None,
    stale_before: int = 0,
) -> list[tuple[dict, int, float]]:
    """(features, label, recency weight) of a task's stored rows of one kind from `threads`
    (default: all of them, `experience_threads(memory, task)`), the last one the newest. Rows of
    the first `stale_before` threads (a regime the drift test says the operator left) count
    `operator_model.STALE_WEIGHT` times less."""
    threads = experience_threads(memory, task) if threads is None else threads
    return _weighted(_stored(memory, task, (kind,)), (kind,), threads, stale_before)


def _stored(
    memory: Memory, task: str, kinds: tuple[str, ...] | None = None
) -> list[dict[str, Any]]:
    """The task's stored experience rows (of `kinds`, default all) in insertion order, features
    parsed: read once per fit (the fit selects from them by kind, thread and regime)."""
    where, args = "task = ?", [task]
    if kinds is not None:
        where += f" and kind in ({','.join('?' * len(kinds))})"
        args += list(kinds)
    return [
        {**r, "features": json.loads(r["features"])}
        for r in memory.db.query(
            "select thread_id, kind, features, label, weight from experience "
            f"where {where} order by rowid",
            args,
        )
    ]


def _weighted(
    stored: list[dict[str, Any]], kinds: tuple[str, ...], threads: list[str], stale_before: int = 0
) -> list[tuple[dict, int, float]]:
    """`experience_rows` over rows already read, kind after kind."""
    age = {t: len(threads) - 1 - i for i, t in enumerate(threads)}
    stale = set(threads[:stale_before])
    out = []
    for kind in kinds:
        for r in stored:
            if r["kind"] != kind or r["thread_id"] not in age:
                continue  # another kind, or outside the threads asked for
            weight = float(r["weight"]) * refit.recency_weight(age[r["thread_id"]])
            if r["thread_id"] in stale:
                weight *= operator_model.STALE_WEIGHT
            out.append((r["features"], int(r["label"]), weight))
    return out


# ------------------------------------------------------------------------------------ versions
_VERSION_CACHE: dict[tuple[str, int], WeightsVersion] = {}
_CACHE_LOCK = threading.Lock()


def latest_version(memory: Memory, task: str) -> WeightsVersion:
    """The version a new learning episode of `task` pins (before any refit: the unknown
    operator's)."""
    rows = list(
        memory.db.query(
            "select version from weight_versions where task = ? order by version desc limit 1",
            [task],
        )
    )
    if not rows:
        return unknown_operator_version(task)
    return get_version(memory, task, rows[0]["version"])


def get_version(memory: Memory, task: str, version: int | None) -> WeightsVersion:
    """The weights of `version` (0 or None: the shipped ones; UNKNOWN_OPERATOR_VERSION: where
    learning starts); cached, versions never change."""
    if not version:
        return shipped_version(task)
    if version == UNKNOWN_OPERATOR_VERSION:
        return unknown_operator_version(task)
    key = (str(memory.path), int(version))
    with _CACHE_LOCK:
        hit = _VERSION_CACHE.get(key)
    if hit is not None:
        return hit
    with memory._lock:
        rows = list(memory.db.query("select * from weight_versions where version = ?", [version]))
    if not rows:
        raise WeightsVersionError(
            f"weights version {version} is not in {memory.path} (pruned or from another "
            "database): this episode's decisions cannot be reproduced"
        )
    r = rows[0]
    model, learner = _learner_of(memory, int(version))
    wv = WeightsVersion(
        r["version"],
        r["task"],
        json.loads(r["profile"]),
        json.loads(r["frontier"]),
        r["thread_id"],
        r["n_rows"],
        r["n_episodes"],
        json.loads(r["tactics"]) if r.get("tactics") else None,
        model,
        learner,
    )
    with _CACHE_LOCK:
        _VERSION_CACHE[key] = wv
        if len(_VERSION_CACHE) > 256:
            _VERSION_CACHE.pop(next(iter(_VERSION_CACHE)))
    return wv


def version_of_thread(memory: Memory, thread_id: str) -> WeightsVersion | None:
    """The version a finished episode produced (a re-run of its reflect finds it here)."""
    rows = list(
        memory.db.query(
            "select version, task from weight_versions where thread_id = ?", [thread_id]
        )
    )
    return get_version(memory, rows[0]["task"], rows[0]["version"]) if rows else None


def stored_learner(
    conn: sqlite3.Connection, version: int
) -> tuple[OperatorModel | None, dict | None] | None:
    """The learner stored with a weights version and its findings (None: no row, e.g. pruned;
    a model of None: that version fitted none). One reader for the agent and the viewer."""
    row = conn.execute(
        "select model, learner from operator_models where version = ?", [version]
    ).fetchone()
    if row is None:
        return None
    model = OperatorModel.loads(row[0]) if row[0] is not None else None
    return model, json.loads(row[1]) if row[1] else None


def _learner_of(memory: Memory, version: int) -> tuple[OperatorModel | None, dict | None]:
    """The learner stored with a weights version (its model may be pruned: then an episode
    pinned to it cannot be reproduced, and says so)."""
    with memory._lock:
        stored = stored_learner(memory.db.conn, version)
    if stored is None:
        raise WeightsVersionError(
            f"the learner of weights version {version} is not in {memory.path} (pruned after "
            f"{MAX_MODELS_PER_TASK} versions): this episode's decisions cannot be reproduced"
        )
    return stored


def refit_task(
    memory: Memory, task: str, thread_id: str, errors: list[float] | None = None
) -> WeightsVersion:
    """Refit the task's weights and its learner from its stored experience; store them as a
    new version. `errors` are the pinned model's errors on this episode's debrief (the drift
    test's newest piece of stream; `pinned_errors`).

    Idempotent per episode: the version produced by `thread_id` is returned if it exists. The
    check, the fit and the insert are one write transaction, so two trainings finishing the
    same episode (a resumed run racing a stale one) store one version, not two.
    """
    existing = version_of_thread(memory, thread_id)
    if existing is not None or memory.read_only:
        return existing or _fit(memory, task, thread_id, errors)
    with memory.write_transaction():
        if version_of_thread(memory, thread_id) is None:
            fitted = _fit(memory, task, thread_id, errors)
            version = (
                memory.db["weight_versions"]
                .insert(
                    {
                        "task": task,
                        "thread_id": thread_id,
                        "profile": json.dumps(fitted.profile, sort_keys=True),
                        "frontier": json.dumps(fitted.frontier, sort_keys=True),
                        "n_rows": fitted.n_rows,
                        "n_episodes": fitted.n_episodes,
                        "tactics": json.dumps(fitted.tactics, sort_keys=True)
                        if fitted.tactics
                        else None,
                        "created_at": utc_now(),
                    },
                )
                .last_pk
            )
            memory.db["operator_models"].insert(
                {
                    "version": version,
                    "task": task,
                    "thread_id": thread_id,
                    "model": fitted.model.dumps() if fitted.model is not None else None,
                    "errors": json.dumps(errors or []),
                    "learner": json.dumps(fitted.learner, sort_keys=True)
                    if fitted.learner
                    else None,
                    "created_at": utc_now(),
                }
            )
            for table, keep in (
                ("weight_versions", MAX_VERSIONS_PER_TASK),
                ("operator_models", MAX_MODELS_PER_TASK),
            ):
                memory.trim(
                    table, key="version", where="task = ?", args=[task], order="version desc",
                    keep=keep,
                )  # fmt: skip
    produced = version_of_thread(memory, thread_id)
    assert produced is not None
    return produced


def pinned_errors(weights: dict[str, Any], rows: list[dict[str, Any]]) -> list[float]:
    """The errors of the model an episode pinned on the ring members its debrief labels (their
    profile rows from `labelled_rows`): the drift test's stream (tools/learning/drift.py). Members
    only: an operator who hides a trait changes how its members look, not how innocents do, and
    the innocents' near-zero errors would drown the change."""
    profile = [r for r in rows if r["kind"] in PROFILE_KINDS and r["label"] == 1]
    feats = [r["features"] for r in profile]
    model = weights.get("profile_model")
    if model is not None:
        probs = model.probabilities(feats)
    else:
        probs = [logistic(weights["profile"], f) for f in feats]
    return operator_model.prediction_errors(probs, [r["label"] for r in profile])


def _stream(memory: Memory, threads: list[str], thread_id: str, errors: list[float] | None):
    """The drift test's stream: stored errors of the task's recent episodes, oldest first,
    then this episode's."""
    stored: dict[str, list[float]] = {}
    if threads:
        marks = ",".join("?" * len(threads))
        for r in memory.db.query(
            f"select thread_id, errors from operator_models where thread_id in ({marks})",
            threads,
        ):
            stored[r["thread_id"]] = json.loads(r["errors"] or "[]")
    stored[thread_id] = list(errors or stored.get(thread_id, []))
    return [stored.get(t, []) for t in threads]


def _fit(
    memory: Memory, task: str, thread_id: str, errors: list[float] | None = None
) -> WeightsVersion:
    """The weights the task's stored experience gives now (version -1: not stored)."""
    shipped = load_weights()
    threads = experience_threads(memory, task)
    stored = _stored(memory, task)
    core_rows = _weighted(stored, ("profile",), threads)
    tactics, model, learner = None, None, None
    if refit.mean_log_loss(shipped["profile"], core_rows) < refit.SHIFT_LOSS:
        # drift check: the shipped weights still explain the recent debriefs, keep them (a refit
        # on a few episodes of an unchanged ring only adds noise: measured on classic campaigns)
        profile, frontier = dict(shipped["profile"]), dict(shipped["frontier"])
        prof_rows = core_rows + _weighted(stored, ("profile0", "profile1"), threads)
        front_rows = _weighted(stored, ("frontier",), threads)
    else:
        # the operator changed: start from the evidence model of the tactics the debriefs show,
        # with the rows of a regime it has left down-weighted
        moved = drift.detect(_stream(memory, threads, thread_id, errors))
        cut = moved.regime_start
        prof_rows = _weighted(stored, PROFILE_KINDS, threads, cut)
        front_rows = _weighted(stored, ("frontier",), threads, cut)
        prior = shipped["profile"]
        if tactics_model.has_model(task):
            prior, found = tactics_model.adapted_prior(task, prof_rows)
            tactics = found.as_json()
        profile = refit.fit_map(prior, prof_rows, refit.PRIOR_STRENGTH["profile"])
        frontier = refit.fit_map(shipped["frontier"], front_rows, refit.PRIOR_STRENGTH["frontier"])
        regime = _weighted(stored, PROFILE_KINDS, threads[cut:])
        evidence = operator_model.trait_evidence(regime)
        learner = {
            "regime_start": threads[cut] if threads else thread_id,
            "regime_episodes": len(threads) - cut,
            "drift": {"before": moved.before, "after": moved.after},
            "evidence": evidence,
            "insight": operator_model.in_words(evidence),
        }
    model = operator_model.fit(prof_rows, _learner_prior(task, profile, tactics))
    n_rows = len(prof_rows) + len(front_rows)
    return WeightsVersion(
        -1, task, profile, frontier, thread_id, n_rows, len(threads), tactics, model, learner
    )


def _learner_prior(task: str, profile: dict[str, float], tactics: dict | None) -> dict:
    """The logistic model the learner's trees start from: the refit one once the debriefs show
    drift; before that, the typical operator's (the tactics model at the `mixed` mean), not the
    shipped classic weights: an operator the shipped weights still explain is about to change
    what got it caught (design decisions, "The learner of the current operator")."""
    if tactics is None and tactics_model.has_model(task):
        return tactics_model.profile_weights(task, {})
    return profile


#: The kinds of labelled rows that score inspected accounts (see `labelled_rows`).
PROFILE_KINDS = ("profile", "profile0", "profile1")


def version_history(memory: Memory, task: str | None = None) -> list[dict]:
    """Every stored version (oldest first) with its weights, inferred tactics and learner's
    reading (`learner`, None without one; `fitted`: whether its trees are still stored)."""
    where, args = ("where w.task = ?", [task]) if task else ("", [])
    return [
        {
            **r,
            "profile": json.loads(r["profile"]),
            "frontier": json.loads(r["frontier"]),
            "tactics": json.loads(r["tactics"]) if r.get("tactics") else None,
            "learner": json.loads(r["learner"]) if r.get("learner") else None,
            "fitted": bool(r.get("fitted")),
        }
        for r in memory.db.query(
            "select w.*, o.learner, o.model is not null as fitted from weight_versions w "
            f"left join operator_models o on o.version = w.version {where} order by w.version",
            args,
        )
    ]
