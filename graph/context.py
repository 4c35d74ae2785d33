"""Run-time settings of the episode graph, read by the nodes through `runtime.context`.

This dataclass is the one definition of every run setting: its default, its help text, its
environment variable and, where it has one, its command-line flag (`fakegang/cli/settings.py`
builds the options of `train`, `eval`, `campaign`, `studio` and `llm-check` from these fields).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

from fakegang.tools.models.model_kinds import kinds_help
from fakegang.tools.models.model_settings import (
    BEDROCK_MODEL_ENV,
    DEFAULT_BEDROCK_MODEL,
    DEFAULT_MODEL,
    DEFAULT_RETRIES,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
    ModelSettings,
)

#: Every setting's environment variable starts with this (see `env_var`).
ENV_PREFIX = "FAKEGANG_"
#: Where checkpoints and the agent's memory live unless `--db` / FAKEGANG_DB_PATH says otherwise.
DEFAULT_DB_PATH = "checkpoints/fakegang.sqlite"
#: How α is computed: credit (counterfactual credit) or seed (the win-rate formula of the original
#: training script, kept for comparison).
ALPHA_RULES = ("credit", "seed")
#: The project's state directory (git-ignored): the default database, Studio's server state and
#: reports live here, wherever `--db` points.
STATE_DIR = "checkpoints"
#: What can play an episode (`Context.run_kind`); only train and campaign learn by default.
RUN_KINDS = ("train", "campaign", "eval", "fork", "studio", "api")
#: The shortest LLM timeout accepted (s): the quickest model here, the local one with its prompt
#: cached, answers a decision in about 0.7 s; below a second nearly every call would time out.
MIN_LLM_TIMEOUT_S = 1.0


def setting(default: Any, description: str, flag: str | None = None, **extra: Any) -> Any:
    """A Context field: its default, help text and (optional) command-line flag in one place."""
    return field(default=default, metadata={"description": description, "flag": flag, **extra})


@dataclass(kw_only=True)
class Context:
    """Settings of one episode run (shown as a form in LangGraph Studio).

    Any field left at its default can be overridden by an environment variable, FAKEGANG_<FIELD>
    (upper case) unless the field names another (`env_var`), which is how `langgraph dev` and the
    CLI hand the same settings to the graph.
    """

    env_url: str = setting(
        "http://127.0.0.1:8000",
        "Base URL of the fakegang environment server; $FAKEGANG_ENV_TOKEN is sent as its "
        "bearer token.",
        "--env-url",
    )
    db_path: str = setting(
        DEFAULT_DB_PATH, "SQLite file holding checkpoints and the agent's memory.", "--db"
    )
    model: str = setting(
        DEFAULT_MODEL,
        f"Chat model: {kinds_help()}.",
        "--model",
    )
    temperature: float = setting(DEFAULT_TEMPERATURE, "LLM temperature.", "--temperature")
    model_seed: int = setting(0, "Sampling seed of the chat model.", "--model-seed")
    llm_timeout_s: float = setting(
        DEFAULT_TIMEOUT_S,
        f"Seconds allowed for one LLM call (at least {MIN_LLM_TIMEOUT_S:g}).",
        "--llm-timeout",
        minimum=MIN_LLM_TIMEOUT_S,
    )
    llm_retries: int = setting(
        DEFAULT_RETRIES, "Retries of an LLM call on throttling or 5xx.", "--llm-retries"
    )
    k_reflections: int = setting(4, "Lessons put in prompts.")
    learn: bool = setting(
        False,
        "Write what the episodes teach into the memory later training reads (lessons, few-shot "
        "example, experience, refits, credit, insights). Training and learning campaigns always "
        "do; Studio and Python API runs only read the memory unless this is on; evaluations and "
        "forks never learn.",
        "--learn",
    )
    record: bool = setting(
        True,
        "Record the episode (outcome, steps, observations) marked by its run kind, learning or "
        "not; off opens the memory read-only.",
    )
    run_kind: str = setting(
        "api",
        "What played the episode: train | campaign | eval | fork | studio | api (Python "
        "calls); recorded on the episode so runs, report and Studio tell them apart.",
        choices=RUN_KINDS,
    )
    refit: bool = setting(True, "Refit the rule weights from debriefs (False: shipped weights).")
    alpha_rule: str = setting(
        "credit",
        "How the LLM earns trust: credit (counterfactual credit) | seed (win-rate formula).",
        "--alpha",
        choices=ALPHA_RULES,
    )
    bedrock_model_id: str = setting(
        DEFAULT_BEDROCK_MODEL,
        "Bedrock model id for --model bedrock.",
        "--bedrock-model",
        env=BEDROCK_MODEL_ENV,
    )
    bedrock_region: str | None = setting(
        None, "AWS region (else AWS_REGION / AWS_DEFAULT_REGION).", "--bedrock-region"
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            env_value = os.environ.get(env_var(f.name))
            if env_value is None or getattr(self, f.name) != f.default:
                continue
            setattr(self, f.name, parse_value(f.name, env_value))
        self.check()

    def check(self) -> None:
        """Refuse settings no run can use (ValueError naming the setting and the bound)."""
        if self.run_kind not in RUN_KINDS:
            raise ValueError(
                f"run_kind must be one of {', '.join(RUN_KINDS)}, not {self.run_kind!r}"
            )
        if not self.llm_timeout_s >= MIN_LLM_TIMEOUT_S:
            raise ValueError(
                f"the LLM timeout (llm_timeout_s, --llm-timeout, ${env_var('llm_timeout_s')}) "
                f"must be at least {MIN_LLM_TIMEOUT_S:g} s, got {self.llm_timeout_s:g}"
            )

    def model_settings(self) -> ModelSettings:
        """The chat-model part of these settings (what the model factory and calls read)."""
        return ModelSettings(
            spec=self.model,
            temperature=self.temperature,
            seed=self.model_seed,
            timeout_s=self.llm_timeout_s,
            max_retries=self.llm_retries,
            bedrock_model_id=self.bedrock_model_id,
            bedrock_region=self.bedrock_region,
        )


def field_type(name: str) -> type:
    """The Python type of Context field `name` (annotations are strings under __future__)."""
    text = str(Context.__dataclass_fields__[name].type)
    return {"float": float, "int": int, "bool": bool}.get(text, str)


def parse_value(name: str, text: str) -> Any:
    """Context field `name` read from text (an environment variable or a flag)."""
    kind = field_type(name)
    if kind is bool:
        return text.lower() in ("1", "true", "yes")
    return kind(text)


def env_var(name: str) -> str:
    """The one environment variable that overrides Context field `name`."""
    f = Context.__dataclass_fields__[name]
    return f.metadata.get("env") or f"{ENV_PREFIX}{name.upper()}"
