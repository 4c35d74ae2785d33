"""Command-line options built from the run settings (`Context` fields): one flag, one default and
one help text per setting, shared by `train`, `eval`, `campaign`, `studio` and `llm-check`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from fakegang.graph.context import Context, env_var, field_type, parse_value

#: The settings of an LLM-backed run, in the order `--help` lists them.
MODEL_SETTINGS = (
    "model",
    "temperature",
    "model_seed",
    "llm_timeout_s",
    "llm_retries",
    "bedrock_model_id",
    "bedrock_region",
)
RUN_SETTINGS = ("db_path", "env_url", *MODEL_SETTINGS, "alpha_rule")
#: Commands that play episodes start an environment server of their own unless told where one runs.
EMBEDDED_ENV = (None, "an embedded server on a free 127.0.0.1 port")


def flag_of(name: str) -> str:
    """The one command-line flag of Context field `name`."""
    flag = Context.__dataclass_fields__[name].metadata.get("flag")
    if not flag:
        raise KeyError(f"Context.{name} has no command-line flag")
    return flag


def _parser(name: str):
    """argparse `type=` for the field: its Python type, and > 0 where the field says so."""
    meta = Context.__dataclass_fields__[name].metadata

    def parse(text: str) -> Any:
        try:
            value = parse_value(name, text)
        except ValueError as exc:
            kind = field_type(name).__name__
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from exc
        if meta.get("positive") and not value > 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, got {text!r}")
        if meta.get("minimum") is not None and not value >= meta["minimum"]:
            raise argparse.ArgumentTypeError(f"must be at least {meta['minimum']:g}, got {text!r}")
        return value

    parse.__name__ = field_type(name).__name__  # argparse names the type in its errors
    return parse


def add_setting_arguments(
    parser: argparse.ArgumentParser,
    names: Iterable[str] = RUN_SETTINGS,
    *,
    overrides: Mapping[str, tuple[Any, str]] | None = None,
) -> None:
    """Add one option per Context field in `names`, stored under the field's name.

    The option's default is the field's own, or its environment variable when set (as the
    graph's Context reads it). `overrides` maps a field to (this command's default, the reason it
    differs), and --help says both.
    """
    overrides = overrides or {}
    for name in names:
        meta = Context.__dataclass_fields__[name].metadata
        if name in overrides:
            default, reason = overrides[name]
            shown = f"{default}; {reason}" if default is not None else reason
        else:
            default = env_default(name)
            shown = f"{default}"
        text = f"{meta['description'].rstrip('.')} (default: {shown}; env {env_var(name)})"
        if field_type(name) is bool:  # a switch (on with the flag, or with its env variable)
            parser.add_argument(
                flag_of(name),
                dest=name,
                action="store_true",
                default=default,
                help=text.replace("%", "%%"),
            )
            continue
        parser.add_argument(
            flag_of(name),
            dest=name,
            metavar=flag_of(name).lstrip("-").upper().replace("-", "_"),
            type=_parser(name),
            choices=meta.get("choices"),
            default=default,
            help=text.replace("%", "%%"),
        )


def env_default(name: str) -> Any:
    """Context field `name`'s default, or the value of its environment variable when set."""
    text = os.environ.get(env_var(name))
    if text is None:
        return Context.__dataclass_fields__[name].default
    try:
        return parse_value(name, text)
    except ValueError:
        kind = field_type(name).__name__
        raise ValueError(f"${env_var(name)} must be a {kind}, got {text!r}") from None


def context_from_args(args: argparse.Namespace, **fixed: Any) -> Context:
    """The Context these options describe (fields without an option keep their default)."""
    given = {f.name: getattr(args, f.name) for f in fields(Context) if hasattr(args, f.name)}
    given = {k: v for k, v in given.items() if v is not None}
    given.update(fixed)
    return Context(**given)
