"""Load a script of bench/<role>/ as the module `bench.<role>.<name>`, the name its siblings
import it by (the scripts run by path and put the checkout on sys.path themselves)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_bench(name: str) -> ModuleType:
    (path,) = ROOT.glob(f"bench/*/{name}.py")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"bench.{path.parent.name}.{name}")
