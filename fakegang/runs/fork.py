"""`fakegang fork THREAD_ID --at K --action "flag u_1a2b3c"`: a what-if branch of an episode.

How a fork is kept apart from the original (so the original stays intact and both are listed):

* it gets a **new thread id** (uuid4). The original's head-branch checkpoints up to the one
  before `step_env` at action index K are copied into the new thread (rows of LangGraph's
  `checkpoints` table, plus the `writes` of every copied checkpoint but the last), then
  `update_state(..., as_node="arbitrate")` replaces `decision.action` there (mode `fork`) and
  `invoke(None)` plays on live. The original thread is never written to.
* the environment episode is rebuilt on a **new env episode id** (= the new thread id): reset
  with the same task and seed, replay the first K recorded actions, check the counters.
* memory rows: the fork's `steps` rows 0..K-1 are copies of the original's, its own rows from K
  on are written by `step_env`; its `episodes` row belongs to a **fork run** (`fork-<8 hex>`,
  `runs.settings.kind = "fork"`), so the parent run's metrics.jsonl never includes it; the
  `forks` table links fork → parent (at_index, action, original_action). `fakegang runs` shows
  each fork under its parent episode, and `fakegang replay` lists a thread's forks.
* a fork is a what-if, not experience: it reads the memory but writes nothing training uses (no
  lesson, few-shot example, experience, refit, credit, insight or α); its episode row is
  recorded with kind `fork` (graph/context.py `Context.learn`, `run_kind`).
"""

from __future__ import annotations

import json
import sys
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from fakegang.graph import resources
from fakegang.graph.graph import compile_with_sqlite
from fakegang.graph.nodes import APPLIES, DECIDES
from fakegang.graph.recovery import rebuild_env_episode
from fakegang.runs.checkpoint_tables import copy_branch
from fakegang.runs.llm_failures import run_llm_failures
from fakegang.runs.records import RunRecords
from fakegang.runs.replay import head_branch
from fakegang.runs.runner import TrainOptions, claim_run, context_for, environment, episode_config
from fakegang.runs.runs import outcome_of
from fakegang.tools.env_client import reset_options
from fakegang.tools.memory.store import Memory, utc_now
from fakegang.tools.rules.actions import format_action, parse_step
from fakegang_env.schema import STEP_COST, ActionType


class ForkError(ValueError):
    """Bad fork request: unknown thread, index out of range, same or malformed action."""


def find_fork_point(chain: list, at: int):
    """The first head-branch checkpoint about to apply action index `at` (before `step_env`)."""
    for snap in chain:
        d = snap.values.get("decision") or {}
        if snap.next == (APPLIES.name,) and d.get("index") == at:
            return snap
    return None


def illegal_reason(
    obs, action_type: str, account_id: str | None, trace: str | None = None
) -> str | None:
    """Why the environment would refuse the action at this observation (its own rules)."""
    if obs.done:
        return "the episode is already over at that point"
    if action_type == "submit":
        return None
    if account_id not in obs.visible_account_ids:
        shown = ", ".join(obs.visible_account_ids[:8])
        return f"{account_id} is not visible at that point (visible: {shown}, …)"
    if action_type == "investigate_network" and obs.steps_remaining < 2:
        return f"investigate_network costs 2 steps and only {obs.steps_remaining} remain"
    if action_type == "pivot":
        if account_id not in obs.inspected_ids:
            return f"{account_id} was not inspected at that point (pivot from an inspected id)"
        cost = STEP_COST[ActionType.PIVOT]
        if obs.steps_remaining < cost:
            return f"pivot costs {cost} step(s) and only {obs.steps_remaining} remain"
        if trace is None:
            return "pivot needs a trace"
    if action_type == "flag" and account_id in obs.flagged_ids:
        return f"{account_id} is already flagged at that point"
    if action_type == "unflag" and account_id not in obs.flagged_ids:
        return f"{account_id} is not flagged at that point"
    return None


def _options(memory, run_id: str, db: str) -> TrainOptions:
    row = memory.run(run_id) if run_id else None
    settings = json.loads(row["settings"]) if row and row.get("settings") else {}
    opts = TrainOptions.from_settings(settings)
    opts = opts.with_db(db)
    return opts


def fork_episode(
    db: str,
    thread_id: str,
    *,
    at: int,
    action: str,
    env_url: str | None = None,
    out: TextIO = sys.stdout,
) -> dict:
    """Fork `thread_id` at action index `at` with `action`; play the branch to its end."""

    if not Path(db).exists():
        raise ForkError(f"no database at {db}")
    try:
        new_action = format_action(*parse_step(action))
    except ValueError as exc:
        raise ForkError(str(exc)) from None
    app = compile_with_sqlite(db)
    chain, _ = head_branch(app, thread_id)
    if not chain:
        raise ForkError(f"no checkpoints for thread {thread_id} in {db}")
    head = chain[-1].values
    n_actions = int(head.get("action_count", 0))
    fp = find_fork_point(chain, at)
    if fp is None:
        if at < 0 or at >= n_actions + (1 if chain[-1].next else 0):
            raise ForkError(
                f"--at {at} is out of range: episode {thread_id} has actions #0..#{n_actions - 1}"
            )
        raise ForkError(
            f"no checkpoint before step_env at action #{at} on the head branch of {thread_id} "
            "(its history was pruned?)"
        )
    state = fp.values
    original = state["decision"]["action"]
    if new_action == original:
        raise ForkError(f"{new_action!r} is what the original branch played at action #{at}")
    probe = Memory(db)
    opts = _options(probe, state.get("run_id", ""), db)
    parent_row = probe.episode(thread_id) or {}
    probe.close()

    new_tid = str(uuid.uuid4())
    fork_run = f"fork-{new_tid[:8]}"
    ids = [s.config["configurable"]["checkpoint_id"] for s in chain]
    fp_id = fp.config["configurable"]["checkpoint_id"]
    ids = ids[: ids.index(fp_id) + 1]
    print(
        f"Fork of episode {thread_id} (run {state.get('run_id')}, episode "
        f"{state.get('episode')}, {state['task']} seed {state['seed']}) at action #{at}",
        file=out,
    )
    print(
        f"  original : {original}  → {outcome_of(parent_row) or parent_row.get('status')}", file=out
    )
    print(f"  fork     : {new_action}", file=out)
    with environment(env_url) as url:
        ctx = context_for(opts, url, kind="fork")
        memory = resources.memory(ctx)
        recorded = [(s["idx"], s["action"]) for s in memory.steps(thread_id) if s["idx"] < at]
        obs = rebuild_env_episode(
            resources.env_client(ctx),
            task=state["task"],
            seed=int(state["seed"]),
            episode_id=new_tid,
            actions=recorded,
            expect_action_count=at,
            expect_step_count=int(state["step_count"]),
            **reset_options(state),
        )
        why = illegal_reason(obs, *parse_step(new_action))
        if why:
            raise ForkError(f"{new_action!r} is illegal at action #{at}: {why}")
        print(
            f"  thread   : {new_tid} (run {fork_run}); env episode rebuilt from {at} recorded "
            f"actions on {url}{'' if env_url else ' (embedded)'}",
            file=out,
            flush=True,
        )
        try:
            copy_branch(app.checkpointer.conn, app.checkpointer.lock, thread_id, new_tid, ids)
            decision = {**state["decision"], "action": new_action, "mode": "fork"}
            app.update_state(
                {
                    "configurable": {
                        "thread_id": new_tid,
                        "checkpoint_ns": "",
                        "checkpoint_id": fp_id,
                    }
                },
                {
                    "decision": decision,
                    "env_episode_id": new_tid,
                    "run_id": fork_run,
                    "thread_id": new_tid,
                },
                as_node=DECIDES.name,
            )
            RunRecords(memory).copy_steps(thread_id, new_tid, at)
            resources.store_observation(ctx, new_tid, obs)
            memory.upsert_episode(
                {
                    "thread_id": new_tid,
                    "run_id": fork_run,
                    "episode": state.get("episode", 0),
                    "task": state["task"],
                    "seed": state["seed"],
                    "status": "running",
                    "started_at": utc_now(),
                    "kind": ctx.run_kind,
                    "learns": int(ctx.learn),
                }
            )
            RunRecords(memory).record_fork(
                {
                    "thread_id": new_tid,
                    "parent_thread_id": thread_id,
                    "at_index": at,
                    "action": new_action,
                    "original_action": original,
                    "run_id": fork_run,
                    "created_at": utc_now(),
                }
            )
        except BaseException:
            _discard(app, memory, new_tid)  # nothing half-made is left behind
            raise
        settings = {
            "kind": "fork",
            "thread_id": new_tid,
            "parent_thread_id": thread_id,
            "parent_run_id": state.get("run_id"),
            "episode": state.get("episode", 0),
            "task": state["task"],
            "seed": state["seed"],
            "at": at,
            "action": new_action,
            "original_action": original,
            "context": asdict(opts.context),
        }
        memory.upsert_run(
            {
                "run_id": fork_run,
                "started_at": utc_now(),
                "status": "running",
                "model": opts.model,
                "settings": json.dumps(settings),
                "episodes_total": 1,
            }
        )
        claim_run(memory, fork_run)
        result = _play(app, ctx, memory, fork_run, new_tid, state["task"], at, out)
    resources.reset_all()
    app.checkpointer.conn.close()
    return result


def _discard(app, memory, thread_id: str) -> None:
    app.checkpointer.delete_thread(thread_id)
    RunRecords(memory).forget_thread(thread_id)


def _play(app, ctx, memory, fork_run: str, thread_id: str, task: str, at: int, out) -> dict:
    try:
        app.invoke(None, episode_config(thread_id, task), context=ctx, durability="sync")
    except KeyboardInterrupt:
        memory.upsert_run({"run_id": fork_run, "status": "interrupted"})
        print(f"\nInterrupted: resume with `fakegang resume {fork_run}`", file=out)
        raise
    memory.upsert_run({"run_id": fork_run, "status": "finished"})
    for s in memory.steps(thread_id):
        if s["idx"] >= at:
            print(
                f"    #{s['idx']:<3d} {s['action']:24s} [{s['mode']}] reward {s['reward']:+.2f}  "
                f"{(s['message'] or '')[:70]}",
                file=out,
            )
    row = memory.episode(thread_id) or {}
    print(f"  result   : {outcome_of(row) or row.get('status')}", file=out)
    for line in run_llm_failures(memory.db, fork_run).lines():
        print(f"  LLM      : {line}", file=out)
    print("  memory   : read only (a what-if teaches training nothing)", file=out)
    print(f"  replay   : fakegang replay {thread_id} --db {ctx.db_path}", file=out)
    return {"thread_id": thread_id, "run_id": fork_run, "won": bool(row.get("won"))}


def resume_fork(run_id: str, *, db: str, env_url: str | None, out: TextIO) -> dict:
    """Finish an interrupted fork (its env episode is rebuilt if the server lost it)."""

    probe = Memory(db)
    settings = json.loads((probe.run(run_id) or {}).get("settings") or "{}")
    probe.close()
    thread_id = settings["thread_id"]
    app = compile_with_sqlite(db)
    snap = app.get_state({"configurable": {"thread_id": thread_id}})
    if not snap.next:
        raise ForkError(f"fork {run_id} is finished: nothing to resume")
    opts = TrainOptions.from_settings(settings)
    opts = opts.with_db(db)
    print(f"Resuming fork {run_id} ({thread_id}) before {', '.join(snap.next)}", file=out)
    with environment(env_url) as url:
        ctx = context_for(opts, url, kind="fork")
        memory = resources.memory(ctx)
        memory.upsert_run({"run_id": run_id, "status": "running"})
        claim_run(memory, run_id)
        result = _play(app, ctx, memory, run_id, thread_id, settings["task"], settings["at"], out)
    resources.reset_all()
    app.checkpointer.conn.close()
    return {**result, "status": "finished", "metrics": None}
