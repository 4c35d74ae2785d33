"""Can a command that writes the database do so? Asked before it starts, not found out mid-run.

SQLite in WAL mode (ours) writes the file itself and creates `-wal` and `-shm` files beside it,
so a run needs the file, any such sibling already there, and its folder writable. Without this
check a read-only file or folder ends the first write in a 37-line "attempt to write a readonly
database" traceback, after the run was announced. `os.access` answers for the real user, so
root (who may write anything) is never refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Files SQLite keeps beside a database while it writes.
SIBLING_SUFFIXES = ("-wal", "-shm", "-journal")


def _existing_folder(path: Path) -> Path:
    """The folder that will hold `path`: its parent, or the nearest ancestor that exists (the
    memory creates the missing ones)."""
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _mode(path: Path) -> str:
    return f"mode {stat.S_IMODE(path.stat().st_mode):04o}"


def write_problem(db: str | Path) -> str | None:
    """The one-line error when `db` cannot be written (saying which file and what to do), or
    None."""
    db = Path(db)
    for path in (db, *(db.with_name(db.name + s) for s in SIBLING_SUFFIXES)):
        if path.exists() and not os.access(path, os.W_OK):
            return (
                f"{path}: is read-only ({_mode(path)}) and this command writes to the database; "
                f"make it writable (chmod u+w {path}) or pass --db with a writable copy"
            )
    folder = _existing_folder(db)
    if not os.access(folder, os.W_OK | os.X_OK):
        return (
            f"{db}: its folder {folder} is read-only ({_mode(folder)}) and SQLite keeps its -wal "
            "and -shm files beside the database; make the folder writable, or copy the database "
            "to a writable folder and pass --db with that path"
        )
    return None


def folder_problem(folder: str | Path, what: str) -> str | None:
    """The one-line error when the output folder `folder` (`what`, e.g. `--log-dir`) cannot be
    written or created, or None."""
    target = Path(folder)
    if target.exists() and not target.is_dir():
        return f"{what} {target}: is a file, not a folder; pass a folder"
    existing = target if target.exists() else _existing_folder(target / "x")
    if not os.access(existing, os.W_OK | os.X_OK):
        return (
            f"{what} {target}: {existing} is read-only ({_mode(existing)}); make it writable "
            f"or pass {what} with a writable folder"
        )
    return None
