"""One definition per setting: the options of every command that plays or calls a model are built
from `Context`, with its flag, its default and its help, and the runs they start carry it."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

import pytest

from fakegang.cli.main import build_parser, main
from fakegang.graph.context import Context, env_var
from fakegang.runs.runner import TrainOptions

COMMANDS = ("train", "eval", "campaign", "studio", "llm-check")
#: A command's own default for a setting, and the words its --help must give as the reason.
DIFFERENT = {
    ("train", "env_url"): "embedded server",
    ("eval", "env_url"): "embedded server",
    ("campaign", "env_url"): "embedded server",
    ("studio", "env_url"): "embedded server",
    ("campaign", "model"): "hundreds of episodes",
}


def subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices[name]


@pytest.fixture(autouse=True)
def _no_setting_env(monkeypatch):
    for name in Context.__dataclass_fields__:
        monkeypatch.delenv(env_var(name), raising=False)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_setting_has_one_flag_with_the_context_default(command: str) -> None:
    fields = Context.__dataclass_fields__
    actions = [a for a in subparser(command)._actions if a.dest in fields]
    assert actions, f"{command} exposes no run setting"
    dests = [a.dest for a in actions]
    assert len(dests) == len(set(dests)), f"{command}: a setting has two flags"
    for action in actions:
        f = fields[action.dest]
        assert action.option_strings == [f.metadata["flag"]]
        reason = DIFFERENT.get((command, action.dest))
        if reason is None:
            assert action.default == f.default, (command, action.dest)
        else:
            assert reason in action.help, (command, action.dest, action.help)


def test_every_model_setting_is_named_the_same_everywhere() -> None:
    flags = {
        command: {a.dest: a.option_strings for a in subparser(command)._actions}
        for command in ("train", "studio", "llm-check")
    }
    for name in ("model", "temperature", "llm_timeout_s", "llm_retries", "model_seed"):
        assert flags["train"][name] == flags["studio"][name] == flags["llm-check"][name]


def test_the_environment_variable_is_the_flag_default(monkeypatch) -> None:
    monkeypatch.setenv("FAKEGANG_TEMPERATURE", "0.9")
    args = subparser("train").parse_args([])
    assert args.temperature == 0.9
    assert subparser("train").parse_args(["--temperature", "0.1"]).temperature == 0.1


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_bad_timeout_exits_2_with_one_line(capsys, value: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["train", "--model", "fake", "--llm-timeout", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--llm-timeout" in err[-1] and value in err[-1]


def test_train_options_hold_the_context() -> None:
    """Settings recorded before the Context are reshaped by a store migration
    (tests/memory/test_migrations.py)."""
    opts = TrainOptions(context=Context(model="fake", db_path="x.sqlite", temperature=0.2))
    assert opts.db == "x.sqlite" and opts.model == "fake"
    again = TrainOptions.from_settings({**json.loads(json.dumps(asdict(opts))), "unknown": 1})
    assert again.context == opts.context
    assert again.with_db("z.sqlite").db == "z.sqlite" and again.db == "x.sqlite"
