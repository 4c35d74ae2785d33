"""What `fakegang runs` shows: every run and its episodes with their status.

Statuses come from two places: the `runs`/`episodes` tables (written by the runner and the
nodes) and the episode's checkpoint. A checkpoint whose `next` is non-empty is an unfinished
episode: `paused` when the run was left paused, `running` while the process that plays it is
alive, otherwise `interrupted` (Ctrl-C, a kill, a crash), and `fakegang resume` finishes it.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from fakegang.graph.graph import builder
from fakegang.runs.records import RunRecords
from fakegang.runs.runner import TrainOptions, episode_thread_id, schedule
from fakegang.tools.memory.read_only import read_only_checkpointer
from fakegang.tools.memory.store import Memory

#: How `fakegang runs` names what played episodes outside any CLI run (their `kind`).
LOOSE_KINDS = {
    "studio": "LangGraph Studio",
    "api": "the Python API",
    "unknown": "Studio or the Python API (recorded before run kinds)",
}


class RunsError(LookupError):
    """Unknown database or run."""


@dataclass
class EpisodeStatus:
    episode: int
    task: str
    seed: int
    thread_id: str
    status: str  # finished | interrupted | paused | running | not started
    outcome: str = ""
    forks: list[dict] = field(default_factory=list)


@dataclass
class RunStatus:
    run_id: str
    status: str  # finished | interrupted | paused | running
    model: str
    started_at: str
    episodes_total: int
    settings: dict
    episodes: list[EpisodeStatus] = field(default_factory=list)
    fork_of: dict | None = None

    @property
    def finished(self) -> int:
        return sum(e.status == "finished" for e in self.episodes)


def owner_alive(owner: dict | None) -> bool:
    """True when the process recorded as playing the run still exists on this host."""
    if not owner or owner.get("host") != socket.gethostname():
        return False
    try:
        os.kill(int(owner["pid"]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return int(owner["pid"]) != os.getpid()


def run_state(memory, row: dict) -> str:
    """The run's status, with a dead `running` run reported as `interrupted`."""
    status = row.get("status") or "running"
    if status == "running" and not owner_alive(RunRecords(memory).run_owner(row["run_id"])):
        return "interrupted"
    return status


def outcome_of(row: dict | None) -> str:
    if not row or row.get("status") != "finished":
        return ""
    return (
        f"{'WIN ' if row['won'] else 'LOSS'} reward={row['reward']:+.2f} "
        f"steps={row['steps_used']} grader={row['grader_score'] or 0:.3f}"
    )


def _episode_status(app, memory, thread_id: str, run_status: str) -> tuple[str, str]:
    snap = app.get_state({"configurable": {"thread_id": thread_id}})
    row = memory.episode(thread_id)
    if snap.created_at is None:
        return "not started", ""
    if not snap.next and row and row["status"] == "finished":
        return "finished", outcome_of(row)
    where = f"at action #{snap.values.get('action_count', 0)}, " + (
        f"next: {', '.join(snap.next)}"
        if snap.next
        else "its graph ended but the episode row was not recorded as finished"
    )
    if run_status in ("paused", "running"):
        return run_status, where
    return "interrupted", where


def collect_runs(db: str | Path, run_id: str | None = None) -> list[RunStatus]:
    """Every run of the database (or just `run_id`), oldest first."""

    if not Path(db).exists():
        raise RunsError(f"no database at {db}")
    memory = Memory(db, file_read_only=True)  # listing runs writes nothing, not even -wal/-shm
    app = builder.compile(checkpointer=read_only_checkpointer(db), name="fakegang_episode")
    try:
        rows = RunRecords(memory).list_runs()
        if run_id is not None:
            rows = [r for r in rows if r["run_id"] == run_id]
            if not rows:
                raise RunsError(f"unknown run {run_id!r} in {db} (`fakegang runs` lists them)")
        out = []
        for row in rows:
            settings = json.loads(row.get("settings") or "{}")
            status = run_state(memory, row)
            run = RunStatus(
                row["run_id"],
                status,
                row.get("model") or "",
                row.get("started_at") or "",
                row.get("episodes_total") or 0,
                settings,
            )
            if settings.get("kind") == "fork":
                thread_ids = [
                    (settings["episode"], settings["task"], settings["seed"], settings["thread_id"])
                ]
                run.fork_of = settings
            elif settings.get("kind") == "eval":  # `fakegang eval`: one episode per seed
                thread_ids = [
                    (i + 1, settings["task"], seed, episode_thread_id(run.run_id, i + 1))
                    for i, seed in enumerate(settings["seeds"])
                ]
            elif settings.get("kind") == "campaign":  # one campaign in one mode: its rounds
                from fakegang.runs.campaign import campaign_threads

                thread_ids = campaign_threads(settings)
            else:
                opts = TrainOptions.from_settings(settings)
                thread_ids = [
                    (ep, task, seed, episode_thread_id(run.run_id, ep))
                    for ep, task, seed in schedule(opts)
                ]
            for ep, task, seed, tid in thread_ids:
                ep_status, outcome = _episode_status(app, memory, tid, status)
                forks = RunRecords(memory).forks_of(tid)
                run.episodes.append(EpisodeStatus(ep, task, seed, tid, ep_status, outcome, forks))
            if status == "finished" and run.finished < len(run.episodes):
                run.status = "interrupted"  # never claimed finished with episodes left
            out.append(run)
        if run_id is None:
            out.extend(_loose_episodes(app, memory, {r["run_id"] for r in rows}))
        return out
    finally:
        memory.close()
        app.checkpointer.conn.close()


def _loose_episodes(app, memory, run_ids: set[str]) -> list[RunStatus]:
    """Episodes played outside a CLI run (e.g. through LangGraph Studio or the Python API)."""
    rows = [
        r
        for r in memory.db.query("select * from episodes order by rowid")
        if r["run_id"] not in run_ids
    ]
    out: dict[str, RunStatus] = {}
    for r in rows:
        played_by = r.get("kind") or "unknown"
        if played_by not in out:
            out[played_by] = RunStatus("(none)", "-", "", "", 0, {"kind": "loose", "by": played_by})
        run = out[played_by]
        run.episodes_total += 1
        status, outcome = _episode_status(app, memory, r["thread_id"], "interrupted")
        run.episodes.append(
            EpisodeStatus(
                r["episode"] or 0,
                r["task"],
                r["seed"],
                r["thread_id"],
                status,
                outcome,
                RunRecords(memory).forks_of(r["thread_id"]),
            )
        )
    return list(out.values())


def format_runs(runs: list[RunStatus], *, show_pending: int = 3) -> str:
    """The table `fakegang runs` prints."""
    if not runs:
        return "no runs yet"
    lines = []
    for run in runs:
        s = run.settings
        if s.get("kind") == "loose":
            by = LOOSE_KINDS.get(s["by"], s["by"])
            lines.append(f"episodes outside any CLI run, played by {by}")
        elif run.fork_of:
            lines.append(
                f"fork {run.run_id}  {run.status}  model={run.model}  of episode "
                f"{s.get('parent_thread_id')} at action #{s.get('at')}: {s.get('action')} "
                f"(was {s.get('original_action')})"
            )
        elif s.get("kind") == "campaign":
            lines.append(
                f"campaign {run.run_id}  {run.status}  model={run.model}  task={s.get('task')}  "
                f"tactics={s.get('tactics')}  mode={s.get('mode')}  rounds {run.finished}/"
                f"{run.episodes_total}  started {run.started_at}"
            )
        else:
            lines.append(
                f"run {run.run_id}  {run.status}  model={run.model}  "
                f"task={s.get('task') or 'curriculum'}  episodes {run.finished}/"
                f"{run.episodes_total}  started {run.started_at}"
            )
        lines.append(
            f"  {'ep':>3}  {'task':6}  {'seed':>4}  {'status':11}  {'thread id':36}  outcome"
        )
        hidden = 0
        for e in run.episodes:
            if e.status == "not started":
                hidden += 1
                if hidden > show_pending:
                    continue
            lines.append(
                f"  {e.episode:3d}  {e.task:6}  {e.seed:4d}  {e.status:11}  {e.thread_id}  "
                f"{e.outcome}"
            )
            for f in e.forks:
                lines.append(
                    f"         └ fork at action #{f['at_index']} ({f['action']}, was "
                    f"{f['original_action']}) → {f['thread_id']}  run {f['run_id']}"
                )
        if hidden > show_pending:
            lines.append(f"       … {hidden - show_pending} more not started")
        lines.append("")
    return "\n".join(lines).rstrip()
