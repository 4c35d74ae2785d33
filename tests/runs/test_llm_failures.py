"""Failures said out loud: a run whose LLM calls failed says so at its end, one line per error
class (each call with --verbose), and so does `fakegang report`; the exit status stays 0 when
the rules carried the run. Invalid settings end in exit code 2 and one line."""

from __future__ import annotations

import re
import socket
import sqlite3

import pytest

from fakegang.cli.main import main
from fakegang.runs.llm_failures import run_llm_failures
from fakegang.tools.memory.migrations import error_class_of

FAILED_LINE = re.compile(
    r"^LLM: (\d+) of (\d+) LLM calls failed \(EndpointConnectionError\): the rules decided "
    r"every step(, (\d+) lessons? built from the facts)?$",
    re.M,
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def unreachable_bedrock(monkeypatch, tmp_path):
    """Bedrock with static fake keys at a loopback port nothing listens on."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", f"http://127.0.0.1:{_closed_port()}")


def test_unreachable_model_is_said_at_the_end_and_in_the_report(
    unreachable_bedrock, env_url, tmp_path, capsys
) -> None:
    db = str(tmp_path / "agent.sqlite")
    argv = ["train", "--model", "bedrock", "--task", "easy", "--episodes", "2", "--db", db]
    argv += ["--env-url", env_url, "--log-dir", str(tmp_path / "runs"), "--llm-timeout", "5"]
    assert main(argv) == 0  # the rules carried the run
    out = capsys.readouterr().out
    [line] = FAILED_LINE.findall(out)
    failed, total = int(line[0]), int(line[1])
    assert failed == total > 0
    conn = sqlite3.connect(db)
    llm_calls = conn.execute("select sum(llm_calls) from episodes").fetchone()[0]
    reflections = conn.execute(
        "select count(*) from episodes where reflection_call = 'error'"
    ).fetchone()[0]
    conn.close()
    assert total == llm_calls + reflections
    assert (int(line[3]) if line[3] else 0) == reflections
    assert "Could not connect" not in out  # each call only with --verbose

    report_dir = tmp_path / "report"
    assert main(["report", "latest", "--db", db, "--out", str(report_dir), "--verbose"]) == 0
    said = capsys.readouterr().out
    assert FAILED_LINE.search(said)
    calls = re.findall(r"^    episode \d+ (?:action #\d+|reflection): (.+)$", said, re.M)
    assert len(calls) == total
    assert all(c.startswith("EndpointConnectionError: Could not connect") for c in calls)
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    assert f"{total} of {total} LLM calls failed (EndpointConnectionError)" in page


def test_a_run_whose_calls_answered_says_nothing(env_url, tmp_path, capsys) -> None:
    db = str(tmp_path / "agent.sqlite")
    argv = ["train", "--model", "fake", "--task", "easy", "--episodes", "2", "--db", db]
    assert main([*argv, "--env-url", env_url, "--log-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "llm_calls=" in out and "LLM calls failed" not in out


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--llm-timeout", "0"], {}, "argument --llm-timeout: must be at least 1, got '0'"),
        (["--llm-timeout", "-5"], {}, "argument --llm-timeout: must be at least 1, got '-5'"),
        (["--llm-timeout", "0.01"], {}, "must be at least 1, got '0.01'"),
        ([], {"FAKEGANG_LLM_TIMEOUT_S": "0"}, "must be at least 1 s, got 0"),
        ([], {"FAKEGANG_TEMPERATURE": "warm"}, "$FAKEGANG_TEMPERATURE must be a float"),
    ],
)
def test_invalid_settings_exit_2_with_one_line(
    argv, env, message, tmp_path, monkeypatch, capsys
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    db = tmp_path / "agent.sqlite"
    assert _exit_code(["train", "--model", "fake", "--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not db.exists()  # nothing was started


def _exit_code(argv: list[str]) -> int:
    """`main`'s return value, or the code argparse exits with."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("timeout after 30.0s x3", "timeout"),
        (
            "EndpointConnectionError: Could not connect to the endpoint URL",
            "EndpointConnectionError",
        ),
        ("internal error: KeyError: 'x'", "KeyError"),
        ("unparseable output (ValidationError): 'hi'", "unparseable output"),
        ("ThrottlingException x3", "ThrottlingException"),
        ("model unavailable: no package", "model unavailable"),
        ("", "error"),
    ],
)
def test_error_class_of_older_rows(text, expected) -> None:
    assert error_class_of(text) == expected


def test_failures_are_counted_per_class_from_the_database(tmp_path) -> None:
    from fakegang.tools.memory.store import Memory

    memory = Memory(tmp_path / "m.sqlite")
    for ep, tid in ((1, "t1"), (2, "t2")):
        memory.upsert_episode({"thread_id": tid, "run_id": "r1", "episode": ep, "task": "easy"})
    rows = [
        ("t1", 0, "ok", None, None),
        ("t1", 1, "error", "timeout after 30.0s", "timeout"),
        ("t1", 2, "skipped", None, None),
        ("t2", 0, "error", "RuntimeError: boom", "RuntimeError"),
        ("t2", 1, "error", "timeout after 30.0s", "timeout"),
    ]
    for tid, idx, status, error, cls in rows:
        memory.upsert_step(
            {
                "thread_id": tid,
                "idx": idx,
                "action": "submit",
                "llm_status": status,
                "llm_error": error,
                "llm_error_class": cls,
                "llm_reason": "the model timed out at action #1: ..." if idx == 2 else None,
            }
        )
    memory.upsert_episode(
        {
            "thread_id": "t1",
            "reflection_call": "skipped",  # not asked: the model had timed out in the episode
        }
    )
    memory.upsert_episode(
        {
            "thread_id": "t2",
            "reflection_call": "error",
            "reflection_error": "RuntimeError: boom",
            "reflection_error_class": "RuntimeError",
        }
    )
    failures = run_llm_failures(memory.db, "r1")
    assert (failures.decide_calls, failures.reflect_calls, failures.benched_episodes) == (4, 1, 1)
    assert failures.lines() == [
        "2 of 5 LLM calls failed (timeout): the rules decided those steps",
        "2 of 5 LLM calls failed (RuntimeError): the rules decided those steps, "
        "1 lesson built from the facts",
        "after a timeout the model was not asked again in 1 episode (the rules decided the rest)",
    ]
    verbose = failures.lines(verbose=True)
    assert "    episode 2 reflection: RuntimeError: boom" in verbose
    assert "    episode 1 action #1: timeout after 30.0s" in verbose
    assert run_llm_failures(memory.db, "other").lines() == []
