"""The episode and curriculum runner behind `fakegang train` (`python train.py`) and `eval`.

Each episode is one invocation of the compiled graph on its own thread (a UUID derived from the
run id and episode number), with `durability="sync"` so a killed run can resume.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.graph import compile_with_sqlite, recursion_limit
from fakegang.runs.learned import learned_lines
from fakegang.runs.pausing import PauseControl, RunPaused, invoke_with_pauses
from fakegang.runs.records import RunRecords
from fakegang.runs.testhooks import callbacks
from fakegang.tools.memory.episode_row import metrics_row
from fakegang.tools.models.chat_models import describe_model
from fakegang_env.tasks import TASK_NAMES, get_task

THREAD_NAMESPACE = uuid.UUID("6c7d9a52-58f1-4c1e-9a3e-3f0b8f6a2d11")
#: The curriculum of the original training script: (first episode index of the phase, its task, the
#: ring's tactics when the run does not fix them, the line that opens it). The hard phase meets an
#: operator who reads the takedowns: its episodes are the rounds of one adaptive campaign.
CURRICULUM = (
    (0, "easy", "classic", "=== Phase 1: Easy — learning basic signal detection ==="),
    (20, "medium", "classic", "=== Phase 2: Medium — handling evasion ==="),
    (
        35,
        "hard",
        "adaptive",
        "=== Phase 3: Hard — an operator who changes what got its accounts banned ===",
    ),
)
PHASES = {start: banner for start, _task, _tactics, banner in CURRICULUM}


@dataclass
class TrainOptions:
    """A training run: its shape (tasks, episodes, seeds, logging) and the episode settings."""

    context: Context = field(default_factory=Context)
    env_url: str | None = None  # None: an embedded server on a free loopback port for the run
    task: str | None = None
    episodes: int = 50
    verbose: bool = False
    log_dir: str = "runs"
    seed_offset: int = 0
    #: the ring's playbook for every episode (`--tactics`); None: the curriculum's (classic, then
    #: the adaptive operator in the hard phase), classic for a run on one task
    tactics: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    pause_before: str | None = None  # node to stop before at every step (`--pause-before`)
    step: bool = False  # stop after every node (`--step`)

    @property
    def db(self) -> str:
        return self.context.db_path

    @property
    def model(self) -> str:
        return self.context.model

    def with_db(self, db: str | Path) -> TrainOptions:
        """The same run on another database file (resume and fork name the file they open)."""
        return replace(self, context=replace(self.context, db_path=str(db)))

    @classmethod
    def from_settings(cls, settings: dict) -> TrainOptions:
        """The options a run was started with (its `runs.settings` JSON; older shapes are
        mapped by the store's migrations)."""
        settings = dict(settings)
        ctx = settings.pop("context", {})
        known = {f.name for f in fields(Context)}
        names = {f.name for f in fields(cls)} - {"context"}
        return cls(
            context=Context(**{k: v for k, v in ctx.items() if k in known}),
            **{k: v for k, v in settings.items() if k in names},
        )


def context_for(opts: TrainOptions, env_url: str, *, kind: str = "train") -> Context:
    """The run's episode settings, pointed at the live environment server, for a run of `kind`:
    a training run learns, a fork never does (a what-if's outcome must not become a lesson)."""
    ctx = replace(opts.context, env_url=env_url, run_kind=kind)
    # set after construction: a value equal to the field's default would yield to $FAKEGANG_LEARN
    ctx.learn = kind == "train"
    return ctx


def curriculum_task(episode_index: int, override: str | None) -> str:
    """The task of the last CURRICULUM phase started by `episode_index` (0-based): episodes 1–20
    easy, 21–35 medium, 36–50 hard."""
    if override:
        return override
    return [task for start, task, _t, _b in CURRICULUM if start <= episode_index][-1]


def episode_tactics(opts: TrainOptions, task: str) -> str:
    """The ring's tactics in an episode of `task` (see `TrainOptions.tactics`)."""
    if opts.tactics:
        return opts.tactics
    if opts.task is None:
        return next((tactics for _s, t, tactics, _b in CURRICULUM if t == task), "classic")
    return "classic"


@dataclass(frozen=True)
class AdaptiveRound:
    """An episode that is a round of the run's adaptive campaign (campaign seed: the run's seed
    offset; round: the episode's index within its task), and the previous round's token."""

    campaign: int
    round: int
    operator_token: str | None

    def episode_input(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tactics": "adaptive",
            "campaign": self.campaign,
            "round": self.round,
        }
        if self.operator_token:
            out["operator_token"] = self.operator_token
        return out


def adaptive_round(app, run_id: str, opts: TrainOptions, episode: int, task: str, seed: int):
    """The adaptive round an episode plays (None if its tactics are not adaptive). The token
    comes from the previous round's final checkpoint, so a resumed run sends the same bytes."""
    if episode_tactics(opts, task) != "adaptive":
        return None
    k = seed - opts.seed_offset
    token = None
    if k > 0:
        previous = [e for e, t, s in schedule(opts) if t == task and s == seed - 1][0]
        config = {"configurable": {"thread_id": episode_thread_id(run_id, previous)}}
        debrief = app.get_state(config).values.get("operator") or {}
        token = debrief.get("next_token")
        if not token:
            raise RuntimeError(
                f"episode {episode} is round {k + 1} of an adaptive campaign, but episode "
                f"{previous} (round {k}) left no operator token: it did not finish"
            )
    return AdaptiveRound(opts.seed_offset, k, token)


def episode_thread_id(run_id: str, episode: int) -> str:
    return str(uuid.uuid5(THREAD_NAMESPACE, f"{run_id}:{episode}"))


def new_run_id() -> str:
    return datetime.now(UTC).strftime("r%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:4]


@contextmanager
def environment(env_url: str | None) -> Iterator[str]:
    """Use the given server, or start an embedded one on a free loopback port for the run."""
    if env_url:
        yield env_url
        return
    # lazy: the embedded server imports OpenEnv (seconds); a run given --env-url never needs it
    from fakegang.graph.embedded_env import embedded_env_server

    with embedded_env_server() as url:
        yield url


def schedule(opts: TrainOptions) -> list[tuple[int, str, int]]:
    """(episode number, task, seed) for the run; seeds count up per task from the offset."""
    per_task: dict[str, int] = defaultdict(int)
    out = []
    for i in range(opts.episodes):
        task = curriculum_task(i, opts.task)
        out.append((i + 1, task, opts.seed_offset + per_task[task]))
        per_task[task] += 1
    return out


class ProgressPrinter:
    """The per-episode lines and phase summaries of the original training script."""

    def __init__(self, out=None) -> None:
        self.out = out or sys.stdout  # read at call time (a test may have replaced it)
        self.by_task: dict[str, list[dict]] = defaultdict(list)
        self.all: list[dict] = []

    def print(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def win_rate(self, task: str, last_n: int = 10) -> float:
        window = self.by_task[task][-last_n:]
        return sum(m["won"] for m in window) / len(window) if window else 0.0

    def record(self, m: dict) -> None:
        """Count an episode in the win rates and summaries without printing it (resume)."""
        self.by_task[m["task"]].append(m)
        self.all.append(m)

    def episode(self, m: dict, learn_status: str) -> None:
        self.record(m)
        tag = "WIN " if m["won"] else "LOSS"
        self.print(
            f"  Ep {m['episode']:3d} | {m['task']:6s} | {tag} | reward={m['reward']:+7.2f} | "
            f"recall={m['recall']:.2f} prec={m['precision']:.2f} | steps={m['steps_used']:2d} | "
            f"wr={self.win_rate(m['task']):.0%} | α={m['alpha_used']:.2f} | "
            f"agree={m['mode_agree']} rule={m['mode_rule']} llm={m['mode_llm']} | "
            f"llm_calls={m['llm_calls']}"
        )
        self.print(f"    └─ learn: {learn_status}")

    def summary(self, title: str) -> None:
        bar = "━" * 70
        self.print(f"\n{bar}\n  {title} SUMMARY\n{bar}")
        for task in TASK_NAMES:
            recs = self.by_task[task]
            if not recs:
                continue
            wins = sum(r["won"] for r in recs)
            avg_r = sum(r["reward"] for r in recs) / len(recs)
            avg_recall = sum(r["recall"] for r in recs) / len(recs)
            avg_grader = sum(r["grader_score"] or 0 for r in recs) / len(recs)
            self.print(
                f"  {task:6s}: {wins}/{len(recs)} wins ({100 * wins / len(recs):.0f}%) | "
                f"avg reward={avg_r:+.2f} | avg recall={avg_recall:.2f} | "
                f"avg grader={avg_grader:.3f}"
            )
        if self.all:
            wins = sum(r["won"] for r in self.all)
            self.print(
                f"  {'TOTAL':6s}: {wins}/{len(self.all)} wins ({100 * wins / len(self.all):.0f}%)"
            )
        self.print(f"{bar}\n")


def write_metrics(memory, run_id: str, log_dir: Path) -> Path:
    """Rewrite this run's rows of <log-dir>/metrics.jsonl from its finished episodes
    (idempotent on resume). Other runs' rows (another `--db`, an earlier run) and lines that are
    not ours stay as they were, in place: a demo run never erases `make run`'s curve."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / "metrics.jsonl"
    rows = [r for r in memory.run_episodes(run_id) if r["status"] == "finished"]
    kept = [line for line in _metrics_lines(path) if _run_of(line) != run_id]
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(kept) + "".join(json.dumps(metrics_row(r)) + "\n" for r in rows))
    tmp.replace(path)
    return path


def _metrics_lines(path: Path) -> list[str]:
    """The lines of an existing metrics.jsonl, each ending in a newline."""
    if not path.is_file():
        return []
    return [line + "\n" for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run_of(line: str) -> str | None:
    """The run id of a metrics.jsonl line (None for a line that is not a JSON object)."""
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row.get("run_id") if isinstance(row, dict) else None


def episode_config(thread_id: str, task: str) -> dict:
    config: dict[str, Any] = {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": recursion_limit(get_task(task).max_steps),
    }
    hooks = callbacks()
    if hooks:
        config["callbacks"] = hooks
    return config


def run_episode(
    app,
    ctx: Context,
    *,
    run_id: str,
    episode: int,
    task: str,
    seed: int,
    resume: bool = False,
    pause: PauseControl | None = None,
    tactics: str = "classic",
    adaptive: AdaptiveRound | None = None,
) -> str:
    """Play one episode through the graph (or finish it from its last checkpoint when `resume`);
    returns its thread id. With an active `pause`, stops at its interrupts (RunPaused on `q`)."""
    thread_id = episode_thread_id(run_id, episode)
    config = episode_config(thread_id, task)
    inp = None if resume else {"task": task, "seed": seed, "run_id": run_id, "episode": episode}
    if inp is not None and tactics != "classic":
        inp["tactics"] = tactics
    if inp is not None and adaptive is not None:
        inp.update(adaptive.episode_input())
    if pause is not None and pause.active:
        invoke_with_pauses(app, ctx, config, inp, pause)
    else:
        app.invoke(inp, config, context=ctx, durability="sync")
    return thread_id


def episode_progress(app, thread_id: str) -> str:
    """`new` (no checkpoint), `pending` (checkpoint with nodes left to run) or `finished`."""
    snap = app.get_state({"configurable": {"thread_id": thread_id}})
    if snap.created_at is None:
        return "new"
    return "pending" if snap.next else "finished"


def claim_run(memory, run_id: str) -> None:
    RunRecords(memory).set_run_owner(run_id, os.getpid(), socket.gethostname())


def play_schedule(
    app,
    ctx: Context,
    memory,
    opts: TrainOptions,
    run_id: str,
    printer: ProgressPrinter,
    *,
    pause: PauseControl | None = None,
) -> Path | None:
    """Play the run's scheduled episodes that are not finished yet, in order.

    An episode with a checkpoint is finished from it (resume); finished ones are only counted.
    Returns the metrics path, or None when the user left the run paused. Ctrl-C marks the run
    `interrupted` (its checkpoints stay consistent) and re-raises.
    """
    log_dir = Path(opts.log_dir)
    try:
        for episode, task, seed in schedule(opts):
            thread_id = episode_thread_id(run_id, episode)
            progress = episode_progress(app, thread_id)
            row = memory.episode(thread_id)
            if progress == "finished" and row and row["status"] == "finished":
                printer.record(metrics_row(row))
                continue
            if opts.task is None and episode - 1 in PHASES:
                printer.print(("\n" if episode > 1 else "") + PHASES[episode - 1])
            elif opts.task is not None and episode == 1:
                printer.print(f"=== Task {task} ===")
            thread_id = run_episode(
                app,
                ctx,
                run_id=run_id,
                episode=episode,
                task=task,
                seed=seed,
                resume=progress != "new",
                pause=pause,
                tactics=episode_tactics(opts, task),
                adaptive=adaptive_round(app, run_id, opts, episode, task, seed)
                if progress == "new"
                else None,
            )
            row = memory.episode(thread_id)
            write_metrics(memory, run_id, log_dir)
            printer.episode(metrics_row(row), row.get("learn_status") or "")
            if opts.verbose:
                for s in memory.steps(thread_id):
                    printer.print(
                        f"      {s['idx'] + 1:3d}: {s['action']:32s} [{s['mode']}] "
                        f"rule={s['rule_confidence']:.2f} {s['message'][:60]}"
                    )
            if episode % 10 == 0 and episode < opts.episodes:  # the last one is FINAL's
                printer.summary(f"Episodes 1–{episode}")
    except RunPaused as paused:
        memory.upsert_run({"run_id": run_id, "status": "paused"})
        write_metrics(memory, run_id, log_dir)
        printer.print(
            f"\nPaused before {', '.join(paused.next_nodes)}: continue with "
            f"`fakegang resume {run_id} --db {opts.db}`"
        )
        return None
    except KeyboardInterrupt:
        _rollback(app)
        memory.upsert_run({"run_id": run_id, "status": "interrupted"})
        printer.print(f"\nInterrupted: resume with `fakegang resume {run_id} --db {opts.db}`")
        raise
    memory.upsert_run({"run_id": run_id, "status": "finished"})
    printer.summary("FINAL")
    tactics = {task: episode_tactics(opts, task) for task, seen in printer.by_task.items() if seen}
    for line in learned_lines(memory, printer.by_task, tactics):
        printer.print(line)
    printer.print("")
    say_llm_failures(memory, run_id, printer, verbose=opts.verbose)
    printer.print(memory.summary())
    path = write_metrics(memory, run_id, log_dir)
    printer.print(f"\nMetrics saved to: {path}")
    printer.print(f"Memory saved to: {opts.db}")
    return path


def say_llm_failures(memory, run_id: str, printer: ProgressPrinter, *, verbose: bool) -> None:
    """The run's failed LLM calls, one line per error class (each call with `verbose`)."""
    from fakegang.runs.llm_failures import run_llm_failures

    lines = run_llm_failures(memory.db, run_id).lines(verbose=verbose)
    for line in lines:
        printer.print(line if line.startswith(" ") else f"LLM: {line}")
    if lines:
        printer.print("")


def _rollback(app) -> None:
    """Ctrl-C may land between a checkpoint write and its commit: drop the half transaction."""
    conn = getattr(app.checkpointer, "conn", None)
    if conn is not None and conn.in_transaction:
        conn.rollback()


class ShutdownGuard:
    """Set `finished` once the run is recorded finished: a Ctrl-C that lands after it (while
    the embedded server or the model shuts down) is ignored, so a finished run never ends with
    exit code 130. Reusable: `with guard:` around each shutdown step."""

    def __init__(self) -> None:
        self.finished = False

    def __enter__(self) -> ShutdownGuard:
        return self

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: Any) -> bool:
        return kind is KeyboardInterrupt and self.finished


def train(opts: TrainOptions, out=None, stdin=None) -> dict:
    """The main job: the curriculum (or one task) with learning between episodes."""
    printer = ProgressPrinter(out)
    run_id = new_run_id()
    bar = "━" * 70
    # fail fast on a model that cannot be built (missing package, region, credential), before
    # starting a server or writing a run; building makes no network call
    resources.chat_model(context_for(opts, opts.env_url or ""))
    guard = ShutdownGuard()
    with guard, environment(opts.env_url) as env_url:
        ctx = context_for(opts, env_url)
        pause = (
            PauseControl(opts.pause_before, opts.step, stdin=stdin or sys.stdin, out=printer.out)
            if opts.step or opts.pause_before
            else None
        )
        printer.print(f"\n{bar}\n  Fake Gang Detection — Hybrid Policy Training (LangGraph)")
        printer.print(f"  Run id         : {run_id}")
        printer.print(f"  OpenEnv server : {env_url}{'' if opts.env_url else ' (embedded)'}")
        printer.print(f"  Episodes       : {opts.episodes}")
        printer.print(f"  Task schedule  : {opts.task or 'curriculum (easy→medium→hard)'}")
        printer.print(f"  LLM            : {describe_model(ctx.model_settings())}")
        printer.print("  Policy         : Hybrid (rules ↔ LLM, dynamic α)")
        printer.print("  Learning       : Reflexion (reflections + few-shot in prompt)")
        printer.print(f"  Memory         : {opts.db}\n{bar}\n")
        app = compile_with_sqlite(opts.db)
        memory = resources.memory(ctx)
        memory.upsert_run(
            {
                "run_id": run_id,
                "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "status": "running",
                "model": opts.model,
                "settings": json.dumps({"kind": "train", **asdict(opts)}),
                "episodes_total": opts.episodes,
            }
        )
        claim_run(memory, run_id)
        printer.print(memory.summary() + "\n")
        path = play_schedule(app, ctx, memory, opts, run_id, printer, pause=pause)
        guard.finished = True
    with guard:
        resources.reset_all()
    return {"run_id": run_id, "metrics": str(path) if path else None}
