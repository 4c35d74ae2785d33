"""The OpenAPI document is the truth: Schemathesis (all checks, stateful links, fixed seed) finds
no failure against the real server on loopback, and the document declares what the server does.

Schemathesis runs as its CLI (`st run`), as a new user would, from its own venv that
`make setup` makes (`.venv/tools/schemathesis`, see the Makefile for why it is separate).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from env_fixtures import ServerProcess, free_port

from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.server.auth import TOKEN_ENV
from fakegang_env.server.requests import EPISODE_ID_PATTERN, MAX_SEED

REPO = Path(__file__).resolve().parents[2]
SEED = 20261203
TOKEN = "contract-test-token-0123456789abcdef"


def schemathesis_cli() -> str:
    local = Path(sys.prefix) / "tools" / "schemathesis" / "bin" / "st"
    found = str(local) if local.exists() else os.environ.get("FAKEGANG_ST") or shutil.which("st")
    if not found:
        pytest.fail("Schemathesis is missing: `make setup` installs .venv/tools/schemathesis")
    return found


def run_schemathesis(base_url: str, tmp_path: Path, *extra: str, max_examples: int) -> str:
    argv = [schemathesis_cli(), "run", f"{base_url}/openapi.json", "--checks", "all"]
    argv += ["--seed", str(SEED), "--max-examples", str(max_examples), "--workers", "1"]
    argv += ["--no-color", "--wait-for-schema", "60", "--generation-database", "none", *extra]
    proc = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=540, check=False
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    return out


def _server(env: dict[str, str] | None = None) -> ServerProcess:
    port = free_port()
    argv = ["-m", "fakegang_env.server.app", "--port", str(port), "--log-level", "warning"]
    # a fuzzer starts hundreds of unfinished episodes: room for them all
    return ServerProcess(argv, port, env={"FAKEGANG_MAX_EPISODES": "100000", **(env or {})})


def test_schemathesis_all_checks_and_stateful_links_pass(tmp_path) -> None:
    with _server() as server:
        out = run_schemathesis(server.base_url, tmp_path, max_examples=25)
    assert "✅ Stateful" in out and "API Links:    3 covered" in out
    assert " failed" not in out.split("SUMMARY")[-1]


def test_schemathesis_with_a_token_checks_that_auth_is_not_ignored(tmp_path) -> None:
    with _server({TOKEN_ENV: TOKEN}) as server:
        run_schemathesis(
            server.base_url,
            tmp_path,
            "-H",
            f"Authorization: Bearer {TOKEN}",
            "--phases",
            "coverage,stateful",
            max_examples=10,
        )


def test_every_operation_documents_its_layer_answers() -> None:
    doc = build_app(ServerSettings()).openapi()
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            statuses = set(op["responses"])
            assert {"413", "500"} <= statuses, (method, path)
            if "requestBody" in op:
                assert {"400", "422"} <= statuses, (method, path)
            for status, answer in op["responses"].items():
                if status.startswith(("4", "5")):
                    schema = answer["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (path, status)
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    reset = doc["paths"]["/reset"]["post"]["responses"]
    step = doc["paths"]["/step"]["post"]["responses"]
    assert {"503"} <= set(reset) and {"404", "409"} <= set(step)


def test_constraints_are_in_the_schema() -> None:
    schemas = build_app(ServerSettings()).openapi()["components"]["schemas"]
    reset = schemas["ResetParams"]["properties"]
    assert reset["task"]["enum"] == ["easy", "medium", "hard"]
    assert reset["episode_id"]["pattern"] == EPISODE_ID_PATTERN
    assert reset["episode_id"]["minLength"] == 1 and reset["episode_id"]["maxLength"] == 255
    seed = next(s for s in reset["seed"]["anyOf"] if s.get("type") == "integer")
    # exact in JSON (FastAPI writes it as a float; below 2**53 every client reads it exactly)
    assert seed["minimum"] == 0 and seed["maximum"] == MAX_SEED == 2**53 - 1
    step = schemas["StepBody"]["properties"]
    assert step["episode_id"]["pattern"] == EPISODE_ID_PATTERN
    action_types = schemas["ActionType"]["enum"]
    assert set(action_types) == {
        "inspect",
        "investigate_network",
        "flag",
        "unflag",
        "submit",
        "pivot",
    }
    trace = next(
        s for s in schemas["WireAction"]["properties"]["trace"]["anyOf"] if s["type"] == "string"
    )
    assert trace["maxLength"] == 32
