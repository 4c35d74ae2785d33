"""OpenEnv's quality bar (`openenv validate`, RFC 008) on our package, and the manifest's truth.

* The validator itself: `--level static` PASSes; `--skip-build` has no FAIL, only SKIPs that
  each give a reason (runtime needs a built image; this machine has no Docker daemon).
* The three wire checks OpenEnv runs once a container is up (`runtime.reward_well_formed`,
  `runtime.observation_schema`, `runtime.state_contract`) run here with OpenEnv's own collector
  and graders, against our app on 127.0.0.1 instead of a container, on the manifest's probe.
* `runtime.startup`'s precondition: the package alone (copied as the Dockerfile lays it out)
  serves `/health`.
* What the manifest declares is true: tasks, pins, Dockerfile form, resources' source.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
import yaml
from env_fixtures import ThreadedServer, free_port, wait_healthy
from openenv.validation.graders import Subject
from openenv.validation.graders.runtime import (
    ObservationSchemaGrader,
    RewardWellFormedGrader,
    StateContractGrader,
)
from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
from openenv.validation.runner import run_validation
from openenv.validation.runtime.collector import collect_runtime_evidence
from openenv.validation.runtime.contracts import RuntimePlan, load_runtime_plan
from openenv.validation.types import CheckStatus, Level, Verdict

from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.validation import canaries

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "fakegang_env"
OPENENV = Path(sys.executable).parent / "openenv"


def validate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(OPENENV), "validate", str(PACKAGE), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def manifest() -> dict:
    return yaml.safe_load((PACKAGE / "openenv.yaml").read_text())


@pytest.fixture(scope="module")
def base_url():
    with ThreadedServer(build_app(ServerSettings(max_ws_sessions=8))) as url:
        yield url


def test_static_level_passes() -> None:
    out = validate("--level", "static")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS  static.manifest" in out.stdout
    assert out.stdout.rstrip().endswith("Verdict: PASS")


def test_skip_build_has_no_fail_and_every_skip_says_why() -> None:
    out = validate("--skip-build", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    statuses = {r["check_id"]: r["status"] for r in report["results"]}
    assert statuses["static.manifest"] == "pass"
    assert not [c for c, s in statuses.items() if s in ("fail", "error")], statuses
    assert statuses["runtime.startup"] == "skip"
    for result in report["results"]:
        if result["status"] == "skip":
            assert result["evidence"] and result["evidence"][0].strip(), result
    assert report["verdict"] == "warn"  # skips, no failure
    assert report["manifest"]["manifest_schema_version"] == "2"


def test_a_broken_manifest_fails_static(tmp_path: Path) -> None:
    """Negative control: the static check is not vacuous (a tolerance above policy fails)."""
    bad = manifest()
    bad["validation"]["reward"]["oracle_tolerance"] = 0.5
    (tmp_path / "openenv.yaml").write_text(yaml.safe_dump(bad))
    report = run_validation(tmp_path, max_level=Level.STATIC)
    assert report.verdict is Verdict.FAIL
    assert "exceeds the policy maximum" in report.results[0].evidence[0]


def _runtime_checks(url: str, plan: RuntimePlan) -> dict[str, CheckStatus]:
    parsed = OpenEnvYamlParser().parse(PACKAGE)
    evidence = collect_runtime_evidence(
        url, plan, episode_timeout_s=parsed.resources.episode_timeout_s
    )
    assert evidence.failure_reason is None, evidence.failure_reason
    subject = Subject(
        root=PACKAGE,
        manifest=parsed,
        image_ref=None,
        running=None,
        outputs_dir=PACKAGE / "outputs",
        runtime_evidence=evidence,
    )
    graders = (RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader())
    results = {g.check_id: g.run(subject) for g in graders}
    return {check: (r.status, r.evidence) for check, r in results.items()}


def test_openenv_wire_graders_pass_on_the_probe_without_a_container(base_url: str) -> None:
    """Mirrors runtime.reward_well_formed, runtime.observation_schema, runtime.state_contract."""
    parsed = OpenEnvYamlParser().parse(PACKAGE)
    plan = load_runtime_plan(PACKAGE, parsed.execution)
    results = _runtime_checks(base_url, plan)
    for check, (status, evidence) in results.items():
        assert status is CheckStatus.PASS, (check, evidence)


def test_the_wire_graders_catch_the_undeclared_shaped_channel(base_url: str) -> None:
    """Negative control: the shaped rewards (terminal 19.0) break the declared [0, 1] range."""
    parsed = OpenEnvYamlParser().parse(PACKAGE)
    plan = load_runtime_plan(PACKAGE, parsed.execution)
    shaped = RuntimePlan.model_validate(
        {
            **plan.model_dump(),
            "reset": {
                **plan.reset.model_dump(),
                "options": {**plan.reset.options, "reward_mode": "shaped"},
            },
        }
    )
    results = _runtime_checks(base_url, shaped)
    status, evidence = results["runtime.reward_well_formed"]
    assert status is CheckStatus.FAIL and "in range" in evidence[0]


def test_declared_tasks_match_the_tasks_route_and_openenv_task_api() -> None:
    """Mirrors runtime.task_declaration_accuracy: declared counts = OpenEnv's Task API = /tasks."""
    from fastapi.testclient import TestClient

    client = TestClient(build_app(), base_url="http://127.0.0.1")  # Host checked
    tasks = client.get("/tasks").json()["tasks"]
    capabilities = manifest()["validation"]["capabilities"]
    assert capabilities["task_api"] is True
    declared = capabilities["declared_task_count"]
    splits = [s["name"] for s in client.get("/fakegang_env/splits").json()]
    assert splits == list(declared)
    for split, count in declared.items():
        assert client.post("/fakegang_env/num_tasks", json={"split": split}).json() == {
            "num_tasks": count
        }
        listed = client.post("/fakegang_env/tasks", json={"split": split}).json()["tasks"]
        assert listed == tasks and len(tasks) == count
    assert [t["name"] for t in tasks] == ["easy", "medium", "hard"]
    last = client.post("/fakegang_env/task", json={"split": "tasks", "index": 2})
    assert last.json()["task"]["name"] == "hard"
    for bad in ({"split": "tasks", "index": 3}, {"split": "train", "index": 0}):
        assert client.post("/fakegang_env/task", json=bad).status_code == 400
    assert client.post("/fakegang_env/num_tasks", json={"split": "train"}).status_code == 400


def test_image_requirements_are_pinned_to_the_tested_versions() -> None:
    lines = (PACKAGE / "server" / "requirements.txt").read_text().splitlines()
    pins = dict(line.split("==") for line in lines if line and not line.startswith("#"))
    assert pins["openenv"] == "0.10.0"
    for name, pinned in pins.items():
        assert version(name) == pinned, name


def test_dockerfile_has_openenv_template_form() -> None:
    text = (PACKAGE / manifest()["validation"]["execution"]["dockerfile"]).read_text()
    assert "ARG BASE_IMAGE=ghcr.io/huggingface/openenv-base:latest" in text
    assert "FROM ${BASE_IMAGE} AS builder" in text and text.count("FROM ${BASE_IMAGE}") == 2
    assert "COPY . /app/env/fakegang_env" in text
    assert "-r /app/env/fakegang_env/server/requirements.txt" in text
    assert "HEALTHCHECK" in text and "http://localhost:8000/health" in text
    assert "uvicorn fakegang_env.server.app:app --host 0.0.0.0 --port 8000" in text
    assert manifest()["port"] == 8000


_SERVE_THE_COPY = """
import sys, uvicorn
import fakegang_env.server.app as served
assert served.__file__.startswith(sys.argv[1]), served.__file__
leaked = [m for m in sys.modules if m.split(".")[0] in ("fakegang", "graph", "tools")]
assert not leaked, leaked
uvicorn.run(served.app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""


def _proc_kb(pid: int, file: str, key: str) -> int:
    for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def test_package_alone_serves_within_its_declared_resources(tmp_path: Path) -> None:
    """runtime.startup's precondition and a mirror of semantic.resource_envelope: the package
    copied as the image lays it out (/app/env/fakegang_env, read-only, no repo beside it)
    serves; its largest episodes stay inside the declared memory, storage and time."""
    env_dir = tmp_path / "env"
    shutil.copytree(PACKAGE, env_dir / "fakegang_env", ignore=shutil.ignore_patterns("__pycache__"))
    for path in env_dir.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)
    port, url = free_port(), ""
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(env_dir), "HOME": str(tmp_path)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVE_THE_COPY, str(env_dir), str(port)],
        cwd=env_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, timeout_s=180, proc=server)
        assert httpx.get(f"{url}/metadata").json()["name"] == "fakegang_env"
        declared = manifest()["validation"]["resources"]
        written = _proc_kb(server.pid, "io", "write_bytes")
        for canary in canaries.load():
            if canary["task"] == "hard":
                started = time.monotonic()
                assert canaries.replay_over_ws(url, canary, "grader") == canary["grader_rewards"]
                assert time.monotonic() - started < declared["episode_timeout_s"]
        assert _proc_kb(server.pid, "status", "VmHWM") < declared["memory_mb"] * 1024
        written = _proc_kb(server.pid, "io", "write_bytes") - written
        assert written < declared["disk_mb"] * 2**20
    finally:
        server.terminate()
        server.wait(timeout=15)
        for path in env_dir.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_resources_name_their_measurement() -> None:
    text = (PACKAGE / "openenv.yaml").read_text()
    assert "Measured by bench/speed/env_resources.py" in text
    assert "env_resources" in (REPO / "bench" / "suite" / "run_all.py").read_text()
