"""Where each run's learned memory lives: the run database itself, or a campaign's own file.

`fakegang campaign --db DB` merges every round into DB but keeps each campaign's learning (weight
versions, credit, insights, α, trace yields) only in its own memory, `DB-<mode>-c<N>.sqlite`
(fakegang/runs/campaign_sweep.py): weight versions are numbered per memory and insights and α
are one row per task, so merged they would overwrite each other. The viewer reads those side
files where they are, read-only, rather than copying them into DB: the page never writes, and the
side file is the same memory `fakegang report` reads for a campaign. A side file counts only if
it holds the campaign's own run row: a later invocation with the same mode and campaign number
replaces the file, and the page then says the memory is gone instead of showing another's.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakegang.view import db


@dataclass(frozen=True)
class MemoryFile:
    """One learned memory: the run database, or one campaign's side file."""

    label: str  # what the page calls it
    path: Path
    run_id: str | None  # the campaign run whose memory it is (None: the run database's own)
    mode: str | None = None
    campaign: int | None = None


def side_file(db_path: Path, settings: dict[str, Any]) -> Path:
    """`DB-<mode>-c<N>.sqlite`, as fakegang/runs/campaign_sweep.py `campaign_db_path` names it."""
    stem = str(db_path.with_suffix(""))
    return Path(f"{stem}-{settings.get('mode')}-c{settings.get('campaign')}.sqlite")


def _holds_run(path: Path, run_id: str) -> bool:
    """Whether the file is that run's memory (a later invocation may have replaced it)."""
    try:
        with db.read_only(path) as conn:
            found = conn.execute("select 1 from runs where run_id = ?", [run_id]).fetchone()
    except (sqlite3.DatabaseError, db.ViewError):
        return False
    return found is not None


def campaign_memories(
    conn: sqlite3.Connection, db_path: Path
) -> tuple[list[MemoryFile], list[str]]:
    """The campaign memories beside `db_path` (learning campaigns only: a static campaign does
    not learn), and one line per campaign run whose memory is missing or was replaced."""
    found, missing = [], []
    for r in db.rows(conn, "select run_id, settings from runs order by started_at, rowid"):
        s = db.settings_of(r)
        if s.get("kind") != "campaign" or s.get("mode") not in ("learning", None):
            continue
        path = side_file(db_path, s)
        if path.is_file() and _holds_run(path, r["run_id"]):
            label = f"{s.get('mode') or 'learning'} campaign {s.get('campaign')}"
            found.append(MemoryFile(label, path, r["run_id"], s.get("mode"), s.get("campaign")))
        else:
            missing.append(f"{r['run_id']}: its memory {path.name} is not beside the database")
    return found, missing


def weights_version(
    paths: list[Path], task: str, version: int | None
) -> tuple[dict[str, Any] | None, str]:
    """The pinned rule weights (profile, frontier) of `version` for `task`, from the first of
    `paths` that holds it, and where they came from (None: the shipped weights). The special
    versions are tools/learning/experience.py's own: 0 or none, the shipped weights;
    UNKNOWN_OPERATOR_VERSION (-1), where learning starts (the tactics model's weights)."""
    from fakegang.tools.learning.experience import (
        UNKNOWN_OPERATOR_VERSION,
        unknown_operator_version,
    )

    if not version:
        return None, "the shipped weights"
    if version == UNKNOWN_OPERATOR_VERSION:
        return (
            unknown_operator_version(task).as_rule_weights(),
            "where learning starts (the tactics model's weights, before any debrief)",
        )
    for path in paths:
        try:
            with db.read_only(path) as conn:
                if "weight_versions" not in db.table_names(conn):
                    continue
                row = conn.execute(
                    "select profile, frontier from weight_versions where task = ? and version = ?",
                    [task, version],
                ).fetchone()
                learner = _learner_model(conn, version)
        except (sqlite3.DatabaseError, db.ViewError):
            continue
        if row is not None:
            weights = {"profile": json.loads(row[0]), "frontier": json.loads(row[1])}
            if learner is not None:
                weights["profile_model"] = learner
            source = f"weights v{version}{' and its learner' if learner else ''} ({path.name})"
            return weights, source
    return (
        None,
        f"the shipped weights: v{version}, which the episode played with, is not in this file",
    )


def _learner_model(conn: sqlite3.Connection, version: int):
    """The learner of the current operator stored with `version` (None: none fitted)."""
    if "operator_models" not in db.table_names(conn):
        return None
    from fakegang.tools.learning.experience import stored_learner

    stored = stored_learner(conn, version)
    return stored[0] if stored is not None else None
