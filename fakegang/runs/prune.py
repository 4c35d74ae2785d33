"""`fakegang prune --keep-last N`: bound the checkpoint history of the SQLite file.

Every node run stores the whole graph state, so a finished episode leaves ~5 checkpoints per
action. The last N finished episodes keep their full history (replay, fork); older finished
episodes keep only their final checkpoint (made a root: its parent link is cleared), so
`get_state` and the final lines of `fakegang replay` still work. Unfinished episodes and every
memory table (runs, episodes, steps, reflections, ...) are left untouched. Then the WAL is
checkpointed with TRUNCATE and the file is VACUUMed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path


class PruneError(ValueError):
    """Bad arguments or no database."""


@dataclass
class PruneReport:
    episodes_pruned: int
    episodes_kept_full: int
    checkpoints_deleted: int
    writes_deleted: int
    bytes_before: int
    bytes_after: int


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def prune(db: str | Path, keep_last: int) -> PruneReport:
    """Prune finished episodes older than the `keep_last` most recent ones."""
    from fakegang.graph.graph import compile_with_sqlite

    db = Path(db)
    if keep_last < 0:
        raise PruneError(f"--keep-last must be >= 0, got {keep_last}")
    if not db.exists():
        raise PruneError(f"no database at {db}")
    before = _size(db)
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
        if not {"checkpoints", "writes", "episodes"} <= tables:
            raise PruneError(f"{db} holds no fakegang checkpoints")
        finished = [
            r[0]
            for r in conn.execute(
                "select thread_id from episodes where status = 'finished' "
                "order by finished_at desc, rowid desc"
            )
        ]
        app = compile_with_sqlite(db)
        to_prune = []
        for thread_id in finished[keep_last:]:
            snap = app.get_state({"configurable": {"thread_id": thread_id}})
            if snap.created_at is None or snap.next:
                continue  # no checkpoint, or the episode is resumable: keep it whole
            n = conn.execute(
                "select count(*) from checkpoints where thread_id = ?", (thread_id,)
            ).fetchone()[0]
            if n <= 1:
                continue  # pruned already
            to_prune.append((thread_id, snap.config["configurable"]["checkpoint_id"]))
        app.checkpointer.conn.close()
        deleted_cp = deleted_w = 0
        with conn:
            for thread_id, head_id in to_prune:
                deleted_cp += conn.execute(
                    "delete from checkpoints where thread_id = ? and not "
                    "(checkpoint_ns = '' and checkpoint_id = ?)",
                    (thread_id, head_id),
                ).rowcount
                deleted_w += conn.execute(
                    "delete from writes where thread_id = ? and not "
                    "(checkpoint_ns = '' and checkpoint_id = ?)",
                    (thread_id, head_id),
                ).rowcount
                conn.execute(
                    "update checkpoints set parent_checkpoint_id = null where thread_id = ? "
                    "and checkpoint_id = ?",
                    (thread_id, head_id),
                )
        conn.execute("pragma wal_checkpoint(TRUNCATE)")
        conn.execute("vacuum")
        conn.execute("pragma wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return PruneReport(
        episodes_pruned=len(to_prune),
        episodes_kept_full=min(keep_last, len(finished)),
        checkpoints_deleted=deleted_cp,
        writes_deleted=deleted_w,
        bytes_before=before,
        bytes_after=_size(db),
    )


def format_report(r: PruneReport, db: str | Path) -> str:
    return (
        f"Pruned {r.episodes_pruned} finished episodes to their final checkpoint "
        f"({r.checkpoints_deleted} checkpoints, {r.writes_deleted} writes deleted); "
        f"{r.episodes_kept_full} most recent kept whole.\n"
        f"{db}: {r.bytes_before / 1e6:.2f} MB → {r.bytes_after / 1e6:.2f} MB "
        "(WAL truncated, vacuumed)"
    )
