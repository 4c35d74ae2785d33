"""Data behind `fakegang report`: a training run's episodes (metrics.jsonl, else the database),
its curriculum phases, and the steps of chosen episodes.

The database is opened read-only (a report never creates or changes tables), and metrics.jsonl
is preferred because it is what the run itself published; the page says which source it used.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakegang.runs.llm_failures import run_llm_failures
from fakegang.tools.memory.database_check import open_read_only
from fakegang.tools.memory.episode_row import metrics_row
from fakegang.tools.memory.read_only import connect_read_only

#: Episodes of a task in the sliding win-rate window (the training printout's `wr=` uses 10).
WIN_WINDOW = 10


class ReportError(ValueError):
    """The run cannot be reported (unknown id, missing database, bad episode list...)."""


@dataclass
class RunData:
    run_id: str
    db_path: Path
    run: dict[str, Any]
    rows: list[dict[str, Any]]  # metrics.jsonl rows of the run, in episode order
    source: str  # where `rows` came from
    notes: list[str] = field(default_factory=list)
    thread_of: dict[int, str] = field(default_factory=dict)  # episode number -> thread id
    llm_failures: list[str] = field(default_factory=list)  # one line per error class
    llm_failures_verbose: list[str] = field(default_factory=list)  # and each failed call
    log_only: list[str] = field(default_factory=list)  # notes on episodes the database lacks
    #: an adaptive campaign's operator per round: {episode, won, **debrief}, in episode order
    operator: list[dict[str, Any]] = field(default_factory=list)

    @property
    def settings(self) -> dict[str, Any]:
        try:
            return json.loads(self.run.get("settings") or "{}")
        except ValueError:
            return {}


def connect_ro(db: str | Path) -> sqlite3.Connection:
    path = Path(db)
    if not path.is_file():
        raise ReportError(f"no database at {path} (pass --db PATH)")
    try:  # mode=ro, immutable without a -wal: no -wal/-shm appear beside the file
        probe = open_read_only(path)
        try:
            probe.execute("select 1 from runs limit 1")  # the file's own table, no stand-in
        finally:
            probe.close()
        conn = connect_read_only(path)  # an older file: a migrated copy in memory
    except sqlite3.DatabaseError as exc:
        raise ReportError(f"{path} is not a fakegang memory database: {exc}") from exc
    conn.row_factory = sqlite3.Row
    return conn


def _recent_runs(conn: sqlite3.Connection, n: int = 5) -> list[str]:
    q = "select run_id from runs order by started_at desc, rowid desc limit ?"
    return [r["run_id"] for r in conn.execute(q, [n])]


def _kind(settings: str | None) -> str | None:
    """A run's kind from its settings JSON (None when unreadable)."""
    try:
        value = json.loads(settings or "{}")
    except ValueError:
        return None
    return value.get("kind") if isinstance(value, dict) else None


def latest_training_run(conn: sqlite3.Connection) -> str | None:
    """The most recently started training run (not an evaluation, fork or campaign)."""
    q = "select run_id, settings from runs order by started_at desc, rowid desc"
    return next((r["run_id"] for r in conn.execute(q) if _kind(r["settings"]) == "train"), None)


def resolve_run_id(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    """The `runs` row of `run_id` (`latest` = the most recently started training run)."""
    if run_id == "latest":
        latest = latest_training_run(conn)
        if latest is None:
            recent = _recent_runs(conn)
            others = f" (other runs: {', '.join(recent)})" if recent else ""
            raise ReportError(
                f"the database holds no training run yet{others}: `latest` means the latest "
                "training run; name another run by its id"
            )
        run_id = latest
    row = conn.execute("select * from runs where run_id = ?", [run_id]).fetchone()
    if row is None:
        recent = _recent_runs(conn)
        hint = f"; recent runs: {', '.join(recent)}" if recent else "; the database has no runs"
        raise ReportError(f"unknown run id {run_id!r}{hint}")
    return dict(row)


def _metrics_file_rows(path: Path, run_id: str) -> list[dict] | None:
    """The run's rows of a metrics.jsonl, or None when the file is missing or is another run's."""
    if not path.is_file():
        return None
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ReportError(f"{path} line {n} is not JSON: {exc}") from exc
        if row.get("run_id") == run_id:
            rows.append(row)
    return rows or None


def load_run(run_id: str, db: str | Path, log_dir: str | Path | None = None) -> RunData:
    conn = connect_ro(db)
    try:
        run = resolve_run_id(conn, run_id)
        run_id = run["run_id"]
        episodes = [
            dict(r)
            for r in conn.execute(
                "select * from episodes where run_id = ? and status = 'finished' order by episode",
                [run_id],
            )
        ]
        failures = run_llm_failures(conn, run_id)
    finally:
        conn.close()
    if not episodes:
        raise ReportError(f"run {run_id} has no finished episode yet")
    data = RunData(run_id, Path(db), run, [], "")
    data.llm_failures = failures.lines()
    data.llm_failures_verbose = failures.lines(verbose=True)
    data.notes.extend(f"LLM: {line}" for line in data.llm_failures)
    data.thread_of = {e["episode"]: e["thread_id"] for e in episodes}
    data.operator = [
        {"episode": e["episode"], "won": bool(e["won"]), **json.loads(e["operator"])}
        for e in episodes
        if e.get("operator")
    ]
    log_dir = Path(log_dir) if log_dir else Path(data.settings.get("log_dir") or "runs")
    metrics_path = log_dir / "metrics.jsonl"
    from_file = _metrics_file_rows(metrics_path, run_id)
    db_rows = [metrics_row(e) for e in episodes]
    if from_file is None:
        data.rows, data.source = db_rows, f"database {db} (no rows of this run in {metrics_path})"
        data.notes.append(f"{metrics_path} has no rows of this run: numbers come from the database")
    else:
        data.rows = sorted(from_file, key=lambda r: r["episode"])
        data.source = str(metrics_path)
        by_ep = {r["episode"]: r for r in db_rows}
        differ = [
            r["episode"]
            for r in data.rows
            if r["episode"] in by_ep and _core(r) != _core(by_ep[r["episode"]])
        ]
        if differ:
            data.notes.append(f"metrics.jsonl and the database disagree on episodes {differ}")
        lacking = [r["episode"] for r in data.rows if r["episode"] not in by_ep]
        if lacking:  # e.g. the run was resumed on a copy of the database elsewhere
            data.log_only.append(
                f"{metrics_path} has episodes {lacking} that the database {db} lacks (finished "
                "elsewhere, e.g. resumed on another copy of the database?): their numbers come "
                "from the log only"
            )
            data.notes.extend(data.log_only)
    return data


def _core(row: dict) -> tuple:
    return tuple(row.get(k) for k in ("won", "reward", "grader_score", "steps_used", "seed"))


def steps_of(db: str | Path, thread_id: str) -> list[dict]:
    conn = connect_ro(db)
    try:
        q = "select * from steps where thread_id = ? order by idx"
        return [dict(r) for r in conn.execute(q, [thread_id])]
    finally:
        conn.close()


# --------------------------------------------------------------------------------- derivations
def sliding_win_rate(rows: list[dict], window: int = WIN_WINDOW) -> list[float]:
    """Per episode: the win rate of the last `window` episodes of the same task (as printed)."""
    history: dict[str, list[bool]] = {}
    out = []
    for r in rows:
        h = history.setdefault(r["task"], [])
        h.append(bool(r["won"]))
        recent = h[-window:]
        out.append(sum(recent) / len(recent))
    return out


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def phases(rows: list[dict]) -> list[dict]:
    """Curriculum phases: maximal runs of consecutive episodes of one task."""
    blocks: list[list[dict]] = []
    for r in rows:
        if blocks and blocks[-1][-1]["task"] == r["task"]:
            blocks[-1].append(r)
        else:
            blocks.append([r])
    out = []
    for i, b in enumerate(blocks, 1):
        out.append(
            {
                "phase": i,
                "task": b[0]["task"],
                "first": b[0]["episode"],
                "last": b[-1]["episode"],
                "episodes": len(b),
                "wins": sum(bool(r["won"]) for r in b),
                "win_rate": round(_mean([float(bool(r["won"])) for r in b]), 3),
                "mean_reward": round(_mean([r["reward"] for r in b]), 3),
                "mean_grader": round(_mean([r["grader_score"] or 0.0 for r in b]), 3),
                "mean_recall": round(_mean([r["recall"] for r in b]), 3),
                "mean_precision": round(_mean([r["precision"] for r in b]), 3),
                "mean_steps": round(_mean([r["steps_used"] for r in b]), 2),
                "alpha_first": b[0]["alpha_used"],
                "alpha_last": b[-1]["alpha_used"],
                "agree": sum(r["mode_agree"] for r in b),
                "rule_override": sum(r["mode_rule"] for r in b),
                "llm": sum(r["mode_llm"] for r in b),
                "llm_calls": sum(r["llm_calls"] for r in b),
                "llm_tokens": sum(r["llm_tokens"] for r in b),
            }
        )
    return out


def parse_episode_list(text: str | None) -> list[int] | None:
    """`--episodes 1,5,7-9` -> [1, 5, 7, 8, 9]."""
    if text is None:
        return None
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(v) for v in part.split("-", 1))
                out.extend(range(lo, hi + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise ReportError(f"--episodes expects numbers like 1,5,7-9, got {text!r}") from None
    return list(dict.fromkeys(out))


def choose_episodes(rows: list[dict], requested: list[int] | None) -> list[tuple[int, str]]:
    """(episode, why) pairs to draw: the requested ones, else the first win and the worst loss."""
    known = {r["episode"] for r in rows}
    if requested is not None:
        missing = [e for e in requested if e not in known]
        if missing:
            raise ReportError(
                f"episodes {missing} are not in this run (it has {min(known)}-{max(known)})"
            )
        return [(e, "requested") for e in requested]
    picks: list[tuple[int, str]] = []
    wins = [r for r in rows if r["won"]]
    losses = [r for r in rows if not r["won"]]
    if wins:
        picks.append((wins[0]["episode"], "first win"))
    if losses:
        worst = min(losses, key=lambda r: (r["grader_score"] or 0.0, r["reward"]))
        picks.append((worst["episode"], "worst loss"))
    else:
        worst = min(rows, key=lambda r: (r["grader_score"] or 0.0, r["reward"]))
        if not picks or worst["episode"] != picks[0][0]:
            picks.append((worst["episode"], "lowest grader score (no loss in this run)"))
    return picks
