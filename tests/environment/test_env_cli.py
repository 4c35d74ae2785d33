"""`fakegang env generate | baseline | serve` argument handling and output shapes."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
from env_fixtures import run_env_cli as run_main

from fakegang_env import cli
from fakegang_env.policies import POLICY_NAMES, run_policy
from fakegang_env.tasks import TASKS

SIGNALS = (
    "follower_count",
    "following_count",
    "post_count",
    "avg_post_hour",
    "account_age_days",
    "photo_reuse_score",
    "bio_template_score",
    "comment_repeat_score",
    "ip_cluster_id",
    "shared_ip_count",
    "name_change_count",
    "mutual_follow_rate",
)


def test_generate_prints_one_json_object_with_the_truth(capsys) -> None:
    code, out, _ = run_main(capsys, "env", "generate", "--task", "medium", "--seed", "4")
    assert code == 0
    assert out.count("\n") == 1  # one object, one line
    net = json.loads(out)
    assert {"task", "seed", "max_steps", "starting_ids", "gang_ids", "accounts"} <= set(net)
    assert (net["task"], net["seed"], net["max_steps"]) == ("medium", 4, TASKS["medium"].max_steps)
    ids = {a["account_id"] for a in net["accounts"]}
    assert len(ids) == len(net["accounts"])
    assert abs(len(ids) - TASKS["medium"].n_accounts) <= TASKS["medium"].n_accounts * 0.2
    for acc in net["accounts"]:
        assert isinstance(acc["is_gang"], bool)
        for name in SIGNALS:
            assert name in acc, name
        assert isinstance(acc["follows"], list) and set(acc["follows"]) <= ids
    assert {a["account_id"] for a in net["accounts"] if a["is_gang"]} == set(net["gang_ids"])
    assert set(net["starting_ids"]) <= ids and set(net["starting_ids"]) & set(net["gang_ids"])
    code, again, _ = run_main(capsys, "generate", "--task", "medium", "--seed", "4")
    assert code == 0 and again == out  # deterministic; the leading "env" is optional


def test_baseline_json_matches_in_process_runs(capsys) -> None:
    code, out, _ = run_main(
        capsys, "env", "baseline", "--policy", "naive", "--task", "easy", "--seeds", "0-4", "--json"
    )
    assert code == 0 and out.count("\n") == 1
    got = json.loads(out)
    rows = [run_policy("naive", "easy", s) for s in range(5)]
    assert got["task"] == "easy" and got["policy"] == "naive" and got["episodes"] == 5
    assert got["win_rate"] == pytest.approx(sum(r["won"] for r in rows) / 5)
    assert got["mean_grader"] == pytest.approx(sum(r["grader_score"] for r in rows) / 5)
    assert got["mean_steps"] == pytest.approx(sum(r["steps_used"] for r in rows) / 5)


def test_baseline_table_is_readable(capsys) -> None:
    code, out, _ = run_main(
        capsys, "baseline", "--policy", "oracle", "--task", "hard", "--seeds", "2-3"
    )
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "policy=oracle task=hard seeds=2-3"
    assert lines[1].split()[:3] == ["seed", "won", "grader"]
    assert [ln.split()[0] for ln in lines[3:5]] == ["2", "3"]
    assert lines[-1].startswith("episodes=2 win_rate=")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["generate", "--task", "nope", "--seed", "1"], "valid tasks: easy, medium, hard"),
        (["generate", "--task", "easy", "--seed", "-1"], "seed must be an integer >= 0"),
        (["generate", "--task", "easy", "--seed", "x"], "seed must be an integer >= 0"),
        (["generate", "--task", "easy"], "--seed"),
        (["baseline", "--policy", "smart", "--task", "easy", "--seeds", "0-1"], "invalid choice"),
        (["baseline", "--policy", "naive", "--task", "easy", "--seeds", "3-1"], "A <= B"),
        (["baseline", "--policy", "naive", "--task", "easy", "--seeds", "a-b"], "A-B"),
        (["baseline", "--policy", "naive", "--task", "easy", "--seeds=-1-3"], "A-B"),
        (["baseline", "--policy", "naive", "--task", "easy"], "--seeds"),
        (["serve", "--port", "0"], "must be > 0"),
        (["serve", "--port", "70000"], "1-65535"),
        (["serve", "--max-episodes", "-5"], "must be > 0"),
        ([], "required"),
        (["explode"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(capsys, argv: list[str], needle: str) -> None:
    code, out, err = run_main(capsys, *argv)
    assert code == 2
    assert needle in err, err
    assert out == ""


def test_dispatcher_hook_sets_func() -> None:
    parser = argparse.ArgumentParser(prog="fakegang")
    sub = parser.add_subparsers(dest="command")
    cli.add_env_commands(sub)
    args = parser.parse_args(
        ["env", "baseline", "--policy", "random", "--task", "easy", "--seeds", "7"]
    )
    assert args.func is cli.cmd_baseline and list(args.seeds) == [7]
    args = parser.parse_args(["env", "serve"])
    assert args.func is cli.cmd_serve and (args.host, args.port) == ("127.0.0.1", 8000)


def test_cli_policy_names_match_the_policies() -> None:
    assert cli.POLICY_NAMES == POLICY_NAMES


def test_generate_and_baseline_do_not_import_openenv() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from fakegang_env.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['generate', '--task', 'easy', '--seed', '1'])\n"
        "    main(['baseline', '--policy', 'naive', '--task', 'easy', '--seeds', '0-1'])\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('openenv', 'gradio', 'fastapi')))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_module_entry_point_runs() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "fakegang_env.cli",
            "env",
            "generate",
            "--task",
            "easy",
            "--seed",
            "2",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and json.loads(out.stdout)["seed"] == 2
    bad = subprocess.run(
        [sys.executable, "-m", "fakegang_env.cli", "env", "generate", "--task", "x", "--seed", "2"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "valid tasks" in bad.stderr


def test_serve_on_a_busy_port_exits_2_with_one_line() -> None:
    """As `fakegang studio` does: checked before the server starts, no uvicorn traceback."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "fakegang.cli.main", "env", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: port {port} on 127.0.0.1 is in use: choose another with --port\n"
    )
