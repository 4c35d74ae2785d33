"""`fakegang db check [--db PATH]` and `fakegang db backup DEST [--db PATH]`."""

from __future__ import annotations

import argparse
import sys

from fakegang.cli.settings import add_setting_arguments
from fakegang.tools.memory.database_check import DatabaseProblem, backup_database, check_database


def cmd_db_check(args: argparse.Namespace) -> int:
    try:
        report = check_database(args.db_path, full=True)
    except DatabaseProblem as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0


def cmd_db_backup(args: argparse.Namespace) -> int:
    try:
        report = backup_database(args.db_path, args.dest)
    except DatabaseProblem as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"backup of {args.db_path} written to {args.dest}")
    print("\n".join(report.lines()))
    return 0


def add_db_commands(sub: argparse._SubParsersAction) -> None:
    db = sub.add_parser(
        "db",
        help="check or back up the SQLite file of checkpoints and memory",
        description="Check the database (integrity, schema version) or back it up online.",
    )
    dbsub = db.add_subparsers(dest="db_command", metavar="{check,backup}", required=True)

    p = dbsub.add_parser("check", help="integrity_check and schema version (read-only)")
    add_setting_arguments(p, ("db_path",))
    p.set_defaults(func=cmd_db_check, checks_own_db=True)

    p = dbsub.add_parser(
        "backup", help="copy it with SQLite's online backup (safe while a run writes)"
    )
    p.add_argument("dest", help="path of the copy (must not exist)")
    add_setting_arguments(p, ("db_path",))
    p.set_defaults(func=cmd_db_backup, checks_own_db=True)
