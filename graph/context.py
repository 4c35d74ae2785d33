"""Run-time settings of the episode graph, read by the nodes through `runtime.context`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from fakegang.tools.models.model_settings import (
    BEDROCK_MODEL_ENV,
    DEFAULT_BEDROCK_MODEL,
    ModelSettings,
)

#: Every setting's environment variable starts with this (see `env_var`).
ENV_PREFIX = "FAKEGANG_"
#: Where checkpoints and the agent's memory live unless `--db` / FAKEGANG_DB_PATH says otherwise.
DEFAULT_DB_PATH = "checkpoints/fakegang.sqlite"
#: The project's state directory (git-ignored): the default database, Studio's server state and
#: reports live here, wherever `--db` points.
STATE_DIR = "checkpoints"
#: What can play an episode (`Context.run_kind`); only train and campaign learn by default.
RUN_KINDS = ("train", "campaign", "eval", "fork", "studio", "api")


@dataclass(kw_only=True)
class Context:
    """Settings of one episode run (shown as a form in LangGraph Studio).

    Any field left at its default can be overridden by an environment variable, FAKEGANG_<FIELD>
    (upper case) unless the field names another (`env_var`), which is how `langgraph dev` and the
    CLI hand the same settings to the graph.
    """

    env_url: str = field(
        default="http://127.0.0.1:8000",
        metadata={"description": "Base URL of the fakegang environment server."},
    )
    db_path: str = field(
        default=DEFAULT_DB_PATH,
        metadata={"description": "SQLite file holding checkpoints and the agent's memory."},
    )
    model: str = field(
        default="fake",
        metadata={"description": "Chat model: local | fake | bedrock | provider:model."},
    )
    temperature: float = field(default=0.4, metadata={"description": "LLM temperature."})
    model_seed: int = field(default=0, metadata={"description": "Seed for sampling models."})
    llm_timeout_s: float = field(default=30.0, metadata={"description": "Per-call LLM timeout."})
    llm_retries: int = field(default=2, metadata={"description": "Retries on throttling/5xx."})
    k_reflections: int = field(default=4, metadata={"description": "Lessons put in prompts."})
    learn: bool = field(
        default=False,
        metadata={
            "description": "Write what the episode teaches into the memory later training "
            "reads (lessons, few-shot example, experience, refits, credit, insights). Training "
            "and learning campaigns turn it on; evaluation, forks, Studio and Python API runs "
            "leave it off and only read the memory, unless asked (`--learn`, this field)."
        },
    )
    record: bool = field(
        default=True,
        metadata={
            "description": "Record the episode (outcome, steps, observations) marked by its "
            "run kind, learning or not; off opens the memory read-only."
        },
    )
    run_kind: str = field(
        default="api",
        metadata={
            "description": "What played the episode: train | campaign | eval | fork | studio | "
            "api (Python calls). Recorded on the episode so runs, report and view tell them "
            "apart."
        },
    )
    refit: bool = field(
        default=True,
        metadata={"description": "Refit the rule weights from debriefs (False: shipped weights)."},
    )
    alpha_rule: str = field(
        default="credit",
        metadata={
            "description": "α rule: credit (counterfactual credit) | seed (win-rate formula)."
        },
    )
    bedrock_model_id: str = field(
        default=DEFAULT_BEDROCK_MODEL,
        metadata={"description": "Bedrock model id.", "env": BEDROCK_MODEL_ENV},
    )
    bedrock_region: str | None = field(default=None, metadata={"description": "AWS region."})

    def __post_init__(self) -> None:
        for f in fields(self):
            env_value = os.environ.get(env_var(f.name))
            if env_value is None or getattr(self, f.name) != f.default:
                continue
            if f.type in ("float", float):
                setattr(self, f.name, float(env_value))
            elif f.type in ("int", int):
                setattr(self, f.name, int(env_value))
            elif f.type in ("bool", bool):
                setattr(self, f.name, env_value.lower() in ("1", "true", "yes"))
            else:
                setattr(self, f.name, env_value)
        if self.run_kind not in RUN_KINDS:
            raise ValueError(
                f"run_kind must be one of {', '.join(RUN_KINDS)}, not {self.run_kind!r}"
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


def env_var(name: str) -> str:
    """The one environment variable that overrides Context field `name`."""
    f = Context.__dataclass_fields__[name]
    return f.metadata.get("env") or f"{ENV_PREFIX}{name.upper()}"
