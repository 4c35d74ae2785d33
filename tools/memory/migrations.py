"""The memory database's schema as ordered migrations, counted in SQLite's `PRAGMA user_version`.

As LangGraph's own `SqliteStore` does: `MIGRATIONS` is a list applied in order, and the file
records how many it has had (here in `user_version`, which `fakegang db check` reads). Opening a
database for writing (`Memory`, tools/memory/connection.py) applies the ones it lacks, in one
write transaction; a read-only open of an older file reads a migrated in-memory copy
(tools/memory/read_only.py), so no reader needs a "written before X" branch. A file with a higher
`user_version` than `SCHEMA_VERSION` came from a newer fakegang and is refused (`too_new`).

Migration 1 is the schema as version 1 created it fresh (tools/memory/schema.py). Files stamped 1
were written while columns were still added on open, so migrations 2-6 add what such a file may
lack, skipping what it has; the later ones map old values once, so readers see one shape.

To add a migration: append a `Migration(summary, apply)` at the end of `MIGRATIONS` (never edit,
reorder or remove one that shipped: files in the wild have counted it). `apply(db)` gets the
sqlite-utils database inside the migration transaction (never commit in it): create a table with
`db[name].create(...)`, add a column with `db[table].add_column(name, type)` (a column of the
episode row goes into tools/memory/episode_row.py too), map values with `db.execute(sql)`. Give
a new table a role in `TABLE_ROLES` (tools/memory/schema.py; a test fails until it has one),
then add a dated line to docs/design-decisions.md. `SCHEMA_VERSION` is the list's length.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import sqlite_utils

from fakegang.tools.memory.learning_schema import create_operator_models, create_trace_yields
from fakegang.tools.memory.schema import create_version_1

__all__ = [
    "APPLICATION_ID",
    "LATE_V1_COLUMNS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Migration",
    "SchemaTooNew",
    "error_class_of",
    "migrate",
    "too_new",
]

#: `PRAGMA application_id` of fakegang files: b"FGNG" read as a big-endian int.
APPLICATION_ID = int.from_bytes(b"FGNG", "big")


@dataclass(frozen=True)
class Migration:
    summary: str  # what it changes, one line (named when it fails)
    apply: Callable[[sqlite_utils.Database], None]


class SchemaTooNew(sqlite3.DatabaseError):
    """The file was written by a newer fakegang; `str()` is the one line to show."""


def _add_missing(db: sqlite_utils.Database, table: str, columns: dict[str, type]) -> None:
    """Only for migrations 2-5: files stamped 1 may or may not have these columns already."""
    existing = db[table].columns_dict
    for name, kind in columns.items():
        if name not in existing:
            db[table].add_column(name, kind)


def _learns_from_run_id(db: sqlite_utils.Database) -> None:
    # rows from before the column learned unless an evaluation (run id `eval-...`) played them
    db.execute(
        "update episodes set learns = (coalesce(run_id, '') not like 'eval-%') where learns is null"
    )


#: Flat keys of a training run's settings from before they held a Context -> Context field.
_FLAT_CONTEXT_KEYS = {
    "db": "db_path",
    "model": "model",
    "temperature": "temperature",
    "llm_timeout_s": "llm_timeout_s",
    "bedrock_model_id": "bedrock_model_id",
    "bedrock_region": "bedrock_region",
    "alpha_rule": "alpha_rule",
}


def _settings_shape(db: sqlite_utils.Database) -> None:
    """Runs recorded before kinds were training runs; training runs recorded before the
    options held a Context kept its fields flat."""
    for run_id, text in db.execute("select run_id, settings from runs").fetchall():
        try:
            settings = json.loads(text or "{}")
        except ValueError:
            continue  # not ours to repair: readers already treat it as no settings
        if not isinstance(settings, dict):
            continue
        new = {"kind": "train", **settings} if not settings.get("kind") else dict(settings)
        if new["kind"] == "train" and "context" not in new:
            new["context"] = {
                field: new.pop(old)
                for old, field in _FLAT_CONTEXT_KEYS.items()
                if new.get(old) is not None
            }
            for old in _FLAT_CONTEXT_KEYS:
                new.pop(old, None)
        if new != settings:
            db.execute("update runs set settings = ? where run_id = ?", [json.dumps(new), run_id])


#: The error text of rows from before error classes were recorded starts with the class.
_LEADING_NAME = re.compile(r"^(?:internal error: )?([A-Za-z_][A-Za-z0-9_.]*)(?::|$| x\d+$)")


def error_class_of(text: str | None) -> str:
    """The class of an error text recorded without one (rows from before classes were kept)."""
    text = (text or "").strip()
    for prefix in ("timeout", "unparseable output", "model unavailable"):
        if text.startswith(prefix):
            return prefix
    m = _LEADING_NAME.match(text)
    return m.group(1) if m else "error"


def _error_classes(db: sqlite_utils.Database) -> None:
    # failed calls recorded before their class was stored get the class their text names
    for table, key, status, error, cls in (
        ("steps", "rowid", "llm_status", "llm_error", "llm_error_class"),
        ("episodes", "rowid", "reflection_call", "reflection_error", "reflection_error_class"),
    ):
        rows = db.execute(
            f"select {key}, {error} from {table} where {status} = 'error' and {cls} is null"
        ).fetchall()
        for rowid, text in rows:
            db.execute(
                f"update {table} set {cls} = ? where {key} = ?", [error_class_of(text), rowid]
            )


#: Columns migrations 2-5 add to a file stamped 1 that lacks them (it may have them: files were
#: stamped 1 while columns were still added on open), in migration order.
LATE_V1_COLUMNS: tuple[tuple[str, dict[str, type]], ...] = (
    ("steps", {"llm_prompt_tokens": int, "llm_prompt_tokens_reused": int, "llm_error_class": str}),
    (
        "episodes",
        {
            "kind": str,
            "learns": int,
            "reflection_call": str,
            "reflection_error": str,
            "reflection_error_class": str,
            "operator": str,
        },
    ),
    ("weight_versions", {"tactics": str}),  # NULL: no tactics inferred
    ("steps", {"view": str}),  # NULL: observe's evidence not kept
)


def _late_v1(table: str, columns: dict[str, type]) -> Migration:
    return Migration(f"{table}: {', '.join(columns)}", lambda db: _add_missing(db, table, columns))


MIGRATIONS: tuple[Migration, ...] = (
    Migration("version 1: every table as created fresh", create_version_1),
    *(_late_v1(table, columns) for table, columns in LATE_V1_COLUMNS),
    Migration("trace_yields table (files stamped 1 before it existed)", create_trace_yields),
    Migration("episodes.learns filled from the run id", _learns_from_run_id),
    Migration("runs.settings: kind and context filled in", _settings_shape),
    Migration("error classes filled in from the error text", _error_classes),
    Migration(
        "operator_models table: the learner fitted with each weights version",
        create_operator_models,
    ),
)

#: What this fakegang writes and reads: the count of migrations a current file has had.
SCHEMA_VERSION = len(MIGRATIONS)


def too_new(version: int) -> str | None:
    """What is wrong with a file at `version` that this code cannot read (None: readable)."""
    if version <= SCHEMA_VERSION:
        return None
    return (
        f"was written by a newer fakegang (schema version {version}; this one reads up to "
        f"{SCHEMA_VERSION})"
    )


def migrate(db: sqlite_utils.Database) -> int:
    """Apply the migrations `db` lacks, in order, in one write transaction; mark the file
    fakegang's. Returns the version it had. The caller's `db.atomic()` must begin the write
    lock up front (tools/memory/connection.py) so two processes opening one file never both
    migrate it."""
    if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return SCHEMA_VERSION  # the usual open: no write lock taken
    with db.atomic():
        version = db.execute("PRAGMA user_version").fetchone()[0]
        problem = too_new(version)
        if problem:
            raise SchemaTooNew(f"the database {problem}; upgrade fakegang")
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            try:
                migration.apply(db)
            except sqlite3.Error as exc:  # rolled back whole: the file keeps its version
                raise sqlite3.DatabaseError(
                    f"schema migration {number} ({migration.summary}) failed: {exc}"
                ) from exc
            db.execute(f"PRAGMA user_version = {number}")
        if db.execute("PRAGMA application_id").fetchone()[0] == 0:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    return version
