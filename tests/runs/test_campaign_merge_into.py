"""`fakegang campaign --merge-into DB` names what the file is (a merge target); `--db`, its old
name, still works and says it is deprecated."""

from __future__ import annotations

from fakegang.cli.main import build_parser


def test_merge_into_sets_the_merge_target_quietly(capsys) -> None:
    args = build_parser().parse_args(["campaign", "--task", "easy", "--merge-into", "m.sqlite"])
    assert args.db == "m.sqlite"
    assert capsys.readouterr().err == ""


def test_db_is_a_deprecated_alias_that_still_works(capsys) -> None:
    args = build_parser().parse_args(["campaign", "--task", "easy", "--db", "m.sqlite"])
    assert args.db == "m.sqlite"
    err = capsys.readouterr().err
    assert "--db is deprecated" in err and "--merge-into" in err


def test_no_merge_target_by_default() -> None:
    assert build_parser().parse_args(["campaign", "--task", "easy"]).db is None
