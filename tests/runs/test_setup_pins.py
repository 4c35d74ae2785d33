"""`make setup` builds llama-cpp-python itself (portable CPU flags, its own wheelhouse), so the
version it builds must be the one pyproject.toml pins, or `pip install -e .` would replace it."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pyproject_pin() -> str:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for req in data["project"]["optional-dependencies"]["local"]:
        name, _, version = req.partition("==")
        if name.strip() == "llama-cpp-python":
            return version.strip()
    raise AssertionError("pyproject.toml's [local] extra does not pin llama-cpp-python")


def test_makefile_builds_the_pinned_llama_cpp_python() -> None:
    makefile = (ROOT / "Makefile").read_text()
    match = re.search(r"^LLAMA_VERSION\s*:=\s*(\S+)", makefile, re.MULTILINE)
    assert match, "Makefile defines no LLAMA_VERSION"
    assert match.group(1) == _pyproject_pin()
    assert "-DGGML_NATIVE=OFF" in makefile  # a native build may not run on another CPU


def test_the_installed_build_is_the_pinned_one() -> None:
    pytest.importorskip("llama_cpp", reason="the [local] extra is not installed")
    assert importlib.metadata.version("llama-cpp-python") == _pyproject_pin()
