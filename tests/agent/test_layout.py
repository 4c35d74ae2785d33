"""The folders show the architecture: the environment knows nothing of the agent, the agent's tools
know nothing of the graph or of run management, and no two modules import each other in a loop."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Package name -> folder, as pyproject.toml maps them.
PACKAGES = {
    "fakegang_env": ROOT / "fakegang_env",
    "fakegang.graph": ROOT / "graph",
    "fakegang.tools": ROOT / "tools",
    "fakegang.prompts": ROOT / "prompts",
    "fakegang": ROOT / "fakegang",
}


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.setdefault(".".join([package, *parts]), path)
    return found


def top_level_imports(path: Path) -> set[str]:
    """Modules imported when `path` is imported (function-level imports are lazy: skipped)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def internal_graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: {m for m in top_level_imports(path) if m in mods} for name, path in mods.items()}


def all_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_import_cycles() -> None:
    graph = internal_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert cycles == []


def test_layers_only_import_downwards() -> None:
    forbidden = {
        "fakegang_env": ("fakegang.",),
        "fakegang.tools": ("fakegang.graph", "fakegang.runs", "fakegang.cli", "fakegang.report"),
        "fakegang.graph": ("fakegang.runs", "fakegang.cli", "fakegang.report"),
    }
    wrong = []
    for name, path in modules().items():
        for layer, banned in forbidden.items():
            if name == layer or name.startswith(layer + "."):
                wrong += [(name, m) for m in all_imports(path) if m.startswith(banned)]
    assert wrong == []


def test_tools_root_holds_sub_packages_and_few_shared_modules() -> None:
    loose = sorted(p.name for p in (ROOT / "tools").glob("*.py") if p.name != "__init__.py")
    assert loose == ["env_client.py"]
    packages = sorted(p.name for p in (ROOT / "tools").iterdir() if (p / "__init__.py").exists())
    assert packages == ["learning", "memory", "models", "rules"]
