"""Durability trial: SIGKILL a training run at random points, resume it, compare with a run that
was never interrupted.

    python bench/experiments/durability_trial.py [--trials 10] [--kills 3] [--episodes 4] \
        [--seed 40]

A reference run (fresh database, `--task easy --model fake`, the embedded server) is played once.
Each trial plays the same run in a fresh database and kills it (SIGKILL, no clean-up) `--kills`
times, resuming after each kill, then resumes it to the end. A kill lands either at a random
moment after start-up, or inside the learning phase: the test-only hook
`FAKEGANG_TEST_SLEEP_IN=reflect:start:0:SKIP` (fakegang/runs/testhooks.py) marks the start of a
random episode's `reflect` node (record, lesson, debrief learning) without pausing, and the kill
follows a random 0-80 ms later, while the node's writes are under way. Where each kill landed is
read back from the checkpoint of the pending episode (`next: reflect` = inside the learning
phase). A trial is identical when metrics.jsonl and the episodes, steps, reflections,
trajectories and alpha tables (tests/helpers/runs_helpers.py `memory_tables`, ids and times
left out) equal the reference's. Prints one line per trial and the count of identical resumes.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "helpers"))

from runs_helpers import memory_tables, metrics  # noqa: E402

from fakegang.graph.graph import compile_with_sqlite  # noqa: E402
from fakegang.runs.runner import episode_thread_id  # noqa: E402

HOOK_VAR = "FAKEGANG_TEST_SLEEP_IN"


class Play:
    """One training or resume process with its stderr read line by line as it comes."""

    def __init__(self, argv: list[str], hook: str | None, log: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != HOOK_VAR}
        if hook:
            env[HOOK_VAR] = hook
        self.marker = threading.Event()
        self.started = threading.Event()
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, *argv],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.log.write(line)
            if "[test-hook]" in line:
                self.marker.set()
            if "Memory         :" in line:
                self.started.set()

    def kill_after(self, event: threading.Event, delay_s: float, timeout_s: float = 300) -> bool:
        """SIGKILL `delay_s` after `event`; False when the process ended first."""
        deadline = time.monotonic() + timeout_s
        while not event.wait(0.01):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return False
        time.sleep(delay_s)
        if self.proc.poll() is not None:
            return False
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        return True

    def finish(self) -> int:
        code = self.proc.wait(timeout=900)
        time.sleep(0.1)
        self.log.close()
        return code


def run_id_of(db: Path) -> str | None:
    """The run recorded in `db`, or None before the training wrote it."""
    if not db.exists():
        return None
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("select run_id from runs").fetchone()
    except sqlite3.OperationalError:  # no tables yet
        return None
    finally:
        conn.close()
    return row[0] if row else None


def run_status(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("select status from runs").fetchone()[0]
    finally:
        conn.close()


def landed(db: Path, episodes: int) -> str:
    """Where the last kill left the run: the pending episode's next node, or `between`."""
    run_id = run_id_of(db)
    app = compile_with_sqlite(db)
    try:
        for e in range(1, episodes + 1):
            snap = app.get_state({"configurable": {"thread_id": episode_thread_id(run_id, e)}})
            if snap.created_at is not None and snap.next:
                return f"ep{e}:{','.join(snap.next)}"
        return "after the end" if run_status(db) == "finished" else "between episodes"
    finally:
        app.checkpointer.conn.close()


def train_argv(db: Path, logs: Path, episodes: int) -> list[str]:
    return ["train.py", "--task", "easy", "--episodes", str(episodes), "--model", "fake",
            "--db", str(db), "--log-dir", str(logs)]  # fmt: skip


def trial(n: int, rng: random.Random, args: argparse.Namespace, reference) -> tuple[bool, list]:
    tmp = Path(tempfile.mkdtemp(prefix=f"durability-{n}-"))
    db, logs = tmp / "agent.sqlite", tmp / "runs"
    points: list[str] = []
    finished = False
    for k in range(args.kills + 1):
        run_id = run_id_of(db)
        if run_id and run_status(db) == "finished":  # the last kill came after the end
            finished = True
            break
        argv = (
            ["-m", "fakegang.cli.main", "resume", run_id, "--db", str(db)]
            if run_id
            else train_argv(db, logs, args.episodes)
        )
        if k == args.kills:  # the last process plays to the end
            play = Play(argv, None, tmp / "final.log")
            finished = play.finish() == 0
            break
        in_learning = rng.random() < 0.5
        hook = f"reflect:start:0:{rng.randrange(args.episodes)}" if in_learning else None
        play = Play(argv, hook, tmp / f"p{k}.log")
        event = play.marker if in_learning else play.started
        if not play.kill_after(event, rng.uniform(0.0, 0.08 if in_learning else 3.0)):
            finished = play.finish() == 0  # it ended before the kill point
            break
        play.finish()
        points.append(landed(db, args.episodes) if run_id_of(db) else "before the run")
    run_id = run_id_of(db)
    if not finished or run_id is None:
        return False, [*points, f"the run did not finish: see {tmp}"]
    ref_db, ref_logs, ref_run = reference
    same = metrics(logs) == metrics(ref_logs) and memory_tables(db, run_id) == memory_tables(
        ref_db, ref_run
    )
    return same, points


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--kills", type=int, default=3, help="kills per trial before the end")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ref_dir = Path(tempfile.mkdtemp(prefix="durability-ref-"))
    ref = Play(train_argv(ref_dir / "agent.sqlite", ref_dir / "runs", args.episodes), None,
               ref_dir / "p.log")  # fmt: skip
    assert ref.finish() == 0, (ref_dir / "p.log").read_text()[-2000:]
    reference = (ref_dir / "agent.sqlite", ref_dir / "runs", run_id_of(ref_dir / "agent.sqlite"))
    identical = 0
    in_learning = 0
    for n in range(1, args.trials + 1):
        same, points = trial(n, rng, args, reference)
        identical += same
        in_learning += sum(p.endswith(":reflect") for p in points)
        print(f"trial {n}: {'identical' if same else 'DIFFERENT'}; kills landed: "
              f"{'; '.join(points) or 'none (the run ended first)'}", flush=True)  # fmt: skip
    print(f"identical resumes: {identical} of {args.trials} (kills inside reflect, the learning "
          f"phase: {in_learning})")  # fmt: skip
    return 0 if identical == args.trials else 1


if __name__ == "__main__":
    sys.exit(main())
