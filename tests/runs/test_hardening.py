"""Issue 40, the CLI side: an unreachable environment server, read-only files and folders,
commands that only read, resume's reflection record, Ctrl-C at shutdown, metrics.jsonl and the
smaller one-line errors. Each scenario failed before its fix.

File modes are tested as an unprivileged user (tests/helpers/unprivileged.py): root may write a
0444 file, so as root nothing would be proved; without such a user they are skipped.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runs_helpers import memory_tables, options
from unprivileged import Unprivileged

from fakegang.cli.main import main
from fakegang.graph import resources
from fakegang.runs import runner as runner_module
from fakegang.runs.resume import resume_run
from fakegang.runs.runner import episode_thread_id, train
from fakegang.tools.memory.store import Memory

UNREACHABLE = "http://127.0.0.1:9"


def listing(folder: Path) -> dict[str, tuple[str, int]]:
    """name -> (sha256, mtime_ns) of every file in `folder`: 'nothing written' means equal."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def trained(env_url, tmp_path_factory) -> tuple[Path, str]:
    """A finished 2-episode run's database (WAL file closed: no -wal/-shm beside it)."""
    tmp = tmp_path_factory.mktemp("trained")
    opts = options(tmp, env_url)
    result = train(opts, out=io.StringIO())
    resources.reset_all()
    return Path(opts.db), result["run_id"]


@pytest.fixture
def user() -> Unprivileged:
    found = Unprivileged.find()
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture
def workdir(user):
    path = user.workdir()
    yield path
    Unprivileged.remove(path)


def copy_to(src: Path, folder: Path, name: str = "agent.sqlite") -> Path:
    dest = folder / name
    dest.write_bytes(src.read_bytes())
    return dest


# ---------------------------------------------------------------- 1. unreachable server
@pytest.mark.parametrize(
    "command",
    [
        ["train", "--task", "easy", "--episodes", "1", "--model", "fake"],
        ["resume", "r-none"],
        ["fork", "00000000-0000-0000-0000-000000000000", "--at", "0", "--action", "submit"],
        ["eval", "--task", "easy", "--seeds", "0-0", "--model", "fake"],
    ],
    ids=lambda c: c[0],
)
def test_an_unreachable_env_server_is_one_line_and_exit_2_before_any_run(
    command, trained, tmp_path, capsys
) -> None:
    db = copy_to(trained[0], tmp_path)
    before = listing(tmp_path)
    rc = main([*command, "--env-url", UNREACHABLE, "--db", str(db)])
    line = one_line_error(capsys.readouterr().err)
    assert rc == 2
    assert f"no environment server answers at {UNREACHABLE}" in line and "env serve" in line
    assert listing(tmp_path) == before  # no run created, nothing written


def test_train_on_a_new_path_with_an_unreachable_server_creates_nothing(tmp_path, capsys) -> None:
    db = tmp_path / "new" / "agent.sqlite"
    rc = main(["train", "--model", "fake", "--episodes", "1", "--env-url", UNREACHABLE,
               "--db", str(db), "--log-dir", str(tmp_path / "runs")])  # fmt: skip
    one_line_error(capsys.readouterr().err)
    assert rc == 2 and not db.parent.exists() and not (tmp_path / "runs").exists()


# ---------------------------------------------------------------- 2. read-only file / folder
def test_writing_commands_refuse_a_read_only_file_in_one_line(user, workdir, trained) -> None:
    db = copy_to(trained[0], workdir)
    db.chmod(0o444)
    before = listing(workdir)
    for args in (
        ["train", "--task", "easy", "--episodes", "1", "--model", "fake"],
        ["resume", trained[1]],
        ["prune", "--keep-last", "1"],
    ):
        extra = ["--log-dir", str(workdir / "runs")] if args[0] == "train" else []
        done = user.fakegang([*args, "--db", str(db), *extra], cwd=workdir)
        line = one_line_error(done.stderr)
        assert done.returncode == 2, (args, done.stderr)
        assert "is read-only (mode 0444)" in line and "chmod u+w" in line, line
        assert listing(workdir) == before, args  # no -wal/-shm, file untouched


def test_a_read_only_folder_is_named_and_reading_commands_still_work(
    user, workdir, trained
) -> None:
    folder = workdir / "ro"
    folder.mkdir()
    db = copy_to(trained[0], folder)
    folder.chmod(0o555)
    before = listing(folder)
    done = user.fakegang(
        ["train", "--task", "easy", "--episodes", "1", "--model", "fake", "--db", str(db),
         "--log-dir", str(workdir / "runs")], cwd=workdir,
    )  # fmt: skip
    line = one_line_error(done.stderr)
    assert done.returncode == 2 and f"its folder {folder} is read-only" in line, done.stderr
    runs = user.fakegang(["runs", "--db", str(db)], cwd=workdir)
    assert runs.returncode == 0 and trained[1] in runs.stdout, runs.stderr
    report = user.fakegang(
        ["report", "latest", "--db", str(db), "--out", str(workdir / "report")], cwd=workdir
    )
    assert report.returncode == 0, report.stderr
    assert listing(folder) == before


def test_reading_a_read_only_file_creates_no_siblings(user, workdir, trained) -> None:
    db = copy_to(trained[0], workdir)
    db.chmod(0o444)
    before = listing(workdir)
    assert user.fakegang(["runs", "--db", str(db)], cwd=workdir).returncode == 0
    thread = episode_thread_id(trained[1], 1)
    replayed = user.fakegang(["replay", thread, "--db", str(db)], cwd=workdir)
    assert replayed.returncode == 0 and "Traceback" not in replayed.stderr, replayed.stderr
    out = workdir / "rep"
    done = user.fakegang(["report", "latest", "--db", str(db), "--out", str(out)], cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert listing(workdir) == before  # no 0444 -wal/-shm left to break the next train
    # and so the next run of its owner (file made writable again) works
    db.chmod(0o644)
    done = user.fakegang(
        ["train", "--task", "easy", "--episodes", "1", "--model", "fake", "--db", str(db),
         "--log-dir", str(workdir / "runs")], cwd=workdir,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- 3. reading commands read
@pytest.mark.parametrize(
    "command",
    [["runs"], ["resume", "r-none"], ["report", "latest"], ["replay", "t-none"]],
    ids=lambda c: c[0],
)
def test_an_empty_file_is_refused_and_left_empty(command, tmp_path, capsys) -> None:
    db = tmp_path / "empty.sqlite"
    db.write_bytes(b"")
    rc = main([*command, "--db", str(db)])
    one_line_error(capsys.readouterr().err)
    assert rc == 2
    assert db.stat().st_size == 0 and [p.name for p in tmp_path.iterdir()] == ["empty.sqlite"]


def test_db_check_fails_on_an_empty_file(tmp_path, capsys) -> None:
    db = tmp_path / "empty.sqlite"
    db.write_bytes(b"")
    assert main(["db", "check", "--db", str(db)]) == 2
    assert "is empty (0 bytes)" in one_line_error(capsys.readouterr().err)


def test_runs_and_report_write_nothing_beside_a_database(trained, tmp_path, capsys) -> None:
    db = copy_to(trained[0], tmp_path)
    before = listing(tmp_path)
    assert main(["runs", "--db", str(db)]) == 0
    out = tmp_path.parent / f"{tmp_path.name}-report"
    assert main(["report", "latest", "--db", str(db), "--out", str(out)]) == 0
    capsys.readouterr()
    assert listing(tmp_path) == before


# ---------------------------------------------------------------- 4. resume keeps the call
class Killed(BaseException):
    """What a SIGKILL would be, in-process: nothing after it runs."""


def test_a_kill_after_the_reflection_was_stored_keeps_its_call_on_resume(
    env_url, tmp_path, monkeypatch, uninterrupted_run
) -> None:
    ref_db, _, ref_run = uninterrupted_run
    ref = memory_tables(ref_db, ref_run)
    assert any(e["reflection_call"] == "ok" for e in ref["episodes"])  # the case exists
    real = Memory.add_reflection

    def store_then_die(self, **kw):
        real(self, **kw)  # stored...
        monkeypatch.setattr(Memory, "add_reflection", real)
        raise Killed

    monkeypatch.setattr(Memory, "add_reflection", store_then_die)
    opts = options(tmp_path, env_url)
    with pytest.raises(Killed):
        train(opts, out=io.StringIO())
    resources.reset_all()
    run_id = sqlite3.connect(opts.db).execute("select run_id from runs").fetchone()[0]
    resume_run(run_id, db=opts.db, env_url=env_url, out=io.StringIO())
    got = memory_tables(Path(opts.db), run_id)
    assert [e["reflection_call"] for e in got["episodes"]] == [
        e["reflection_call"] for e in ref["episodes"]
    ]
    assert got == ref


# ---------------------------------------------------------------- 7. smaller items
def test_ctrl_c_while_a_finished_run_shuts_down_exits_0(env_url, tmp_path, monkeypatch, capsys):
    real = resources.reset_all
    fired = []

    def interrupted_reset() -> None:
        if not fired:
            fired.append(1)
            raise KeyboardInterrupt
        real()

    monkeypatch.setattr(runner_module.resources, "reset_all", interrupted_reset)
    rc = main(["train", "--task", "easy", "--episodes", "1", "--model", "fake",
               "--env-url", env_url, "--db", str(tmp_path / "a.sqlite"),
               "--log-dir", str(tmp_path / "runs")])  # fmt: skip
    assert fired and rc == 0
    assert "Memory saved to" in capsys.readouterr().out


def test_metrics_jsonl_keeps_other_runs_and_report_names_what_the_db_lacks(
    env_url, tmp_path, capsys
) -> None:
    logs = tmp_path / "runs"
    first = options(tmp_path / "a", env_url)
    first.log_dir, first.episodes = str(logs), 1
    second = options(tmp_path / "b", env_url)
    second.log_dir, second.episodes = str(logs), 1
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    r1 = train(first, out=io.StringIO())["run_id"]
    resources.reset_all()
    r2 = train(second, out=io.StringIO())["run_id"]
    resources.reset_all()
    rows = [json.loads(x) for x in (logs / "metrics.jsonl").read_text().splitlines()]
    assert [r["run_id"] for r in rows] == [r1, r2]  # the second run did not erase the first
    # the first run's database loses its episode (as if resumed on another copy): say so
    conn = sqlite3.connect(first.db)
    conn.execute("update episodes set status = 'running' where run_id = ?", [r1])
    conn.execute("insert into episodes (thread_id, run_id, episode, task, seed, status, won, "
                 "reward, steps_used) select thread_id || 'x', run_id, 2, task, seed, "
                 "'finished', won, reward, steps_used from episodes")  # fmt: skip
    conn.commit()
    conn.close()
    out = tmp_path / "report"
    rc = main(["report", r1, "--db", first.db, "--log-dir", str(logs), "--out", str(out)])
    said = capsys.readouterr().out
    assert rc == 0
    assert "has episodes [1] that the database" in said
    assert "that the database" in (out / "index.html").read_text()


def test_runs_never_prints_an_empty_next(trained, tmp_path, capsys) -> None:
    db = copy_to(trained[0], tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("update episodes set status = 'running' where episode = 1")
    conn.commit()
    conn.close()
    assert main(["runs", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "next: \n" not in out and not any(line.rstrip().endswith("next:")
                                             for line in out.splitlines())  # fmt: skip
    assert "graph ended but the episode row was not recorded" in out


def test_a_btree_error_is_one_line(trained, tmp_path, capsys) -> None:
    db = copy_to(trained[0], tmp_path)
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("select rootpage from sqlite_master where name = 'steps'").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * page_size
    data[start + 3 : start + 5] = b"\xff\xff"  # the root page claims 65535 cells
    db.write_bytes(bytes(data))
    assert main(["db", "check", "--db", str(db)]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "is damaged" in line


def test_view_on_a_busy_port_is_one_line(trained, capsys) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        rc = main(["view", "--db", str(trained[0]), "--port", str(port)])
    assert rc == 2
    assert f"port {port} on 127.0.0.1 is in use" in one_line_error(capsys.readouterr().err)


def test_log_dir_that_cannot_be_written_is_refused_first(user, workdir) -> None:
    logs = workdir / "logs"
    logs.mkdir()
    logs.chmod(0o555)
    done = user.fakegang(
        ["train", "--task", "easy", "--episodes", "1", "--model", "fake",
         "--db", str(workdir / "a.sqlite"), "--log-dir", str(logs)], cwd=workdir,
    )  # fmt: skip
    line = one_line_error(done.stderr)
    assert done.returncode == 2 and "--log-dir" in line
    assert not (workdir / "a.sqlite").exists()
    os.chmod(logs, 0o755)


# ---------------------------------------------------------------- 5. Ctrl-C ends the process
def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as a terminal's Ctrl-C finds it


def interrupt_after(args: list[str], ready: str, tmp: Path) -> tuple[int, float, str]:
    """Start `fakegang ARGS`, SIGINT it once `ready` shows on stderr; (code, s to exit, err).
    With faulthandler on, a crash leaves every thread's stack in `err`."""
    err_path = tmp / "cmd.err"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", "-m", "fakegang.cli.main", *args],
            stdout=subprocess.DEVNULL,
            stderr=err,
            preexec_fn=_default_sigint,
        )
    deadline = time.monotonic() + 240
    while ready not in err_path.read_text() and proc.poll() is None:
        assert time.monotonic() < deadline, err_path.read_text()[-2000:]
        time.sleep(0.1)
    assert proc.poll() is None, err_path.read_text()[-2000:]
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=30)
    finally:
        proc.kill()
    return code, time.monotonic() - start, err_path.read_text()


@pytest.mark.parametrize(
    "args, ready",
    [
        (["eval", "--task", "hard", "--seeds", "0-60", "--model", "fake"], "eval hard"),
        (["campaign", "--task", "easy", "--rounds", "12", "--campaigns", "0-3", "--compare",
          "--concurrency", "2", "--model", "fake"], "campaign"),
    ],
    ids=["eval", "campaign"],
)  # fmt: skip
def test_ctrl_c_ends_eval_and_campaign_quickly_with_130(args, ready, tmp_path) -> None:
    code, took, err = interrupt_after([*args, "--db", str(tmp_path / "a.sqlite")], ready, tmp_path)
    assert code == 130, err[-2000:]
    assert took < 15, (took, err[-2000:])  # a few seconds; slack for a busy 2-core machine
    assert "Traceback" not in err and "interrupted" in err


def test_a_thread_still_busy_cannot_hold_the_exit_after_ctrl_c(tmp_path) -> None:
    """The watchdog ends a process whose interpreter would join a busy non-daemon thread."""
    script = (
        "import sys, threading, time\n"
        "from fakegang.cli.interrupt import exit_within_grace\n"
        "threading.Thread(target=time.sleep, args=(120,)).start()\n"
        "exit_within_grace(130, grace_s=1.0)\n"
        "sys.exit(130)\n"
    )
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], timeout=60, capture_output=True)
    assert done.returncode == 130 and time.monotonic() - start < 20
