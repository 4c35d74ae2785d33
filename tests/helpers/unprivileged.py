"""Run the `fakegang` CLI without the privilege to ignore file modes, for tests where they matter
(root may write a 0444 file, so a test run as root would prove nothing).

As root the child runs under `setpriv` with the capabilities that bypass file permissions
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) removed from its bounding set: it is then an
ordinary owner of root's files, and a 0444 file or a 0555 folder is read-only to it. (Dropping
to `nobody` is no option where the interpreter lives under a 0700 home.) As any other user it
runs as that user. `Unprivileged.find()` returns the reason to skip when neither works.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DROP = "-dac_override,-dac_read_search,-fowner"


@dataclass
class Unprivileged:
    prefix: tuple[str, ...]

    @classmethod
    def find(cls) -> Unprivileged | str:
        """How to run without file-permission privileges, or why that is impossible here."""
        if os.geteuid() != 0:
            return cls(())
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            return "running as root and `setpriv` (util-linux) is missing to drop capabilities"
        user = cls((setpriv, f"--bounding-set={DROP}", "--"))
        with tempfile.NamedTemporaryFile() as probe:
            os.chmod(probe.name, 0o444)
            check = user.run_python(
                ["-c", f"import os, sys; sys.exit(os.access({probe.name!r}, os.W_OK))"],
                cwd=Path("/"),
            )
        if check.returncode != 0:
            return f"cannot drop the capability to write read-only files: {check.stderr[-300:]}"
        return user

    def run_python(
        self, argv: list[str], *, cwd: Path, timeout: float = 300, env: dict | None = None
    ) -> subprocess.CompletedProcess:
        base = {k: v for k, v in os.environ.items() if not k.startswith("FAKEGANG_TEST_")}
        return subprocess.run(
            [*self.prefix, sys.executable, *argv],
            cwd=cwd,
            env={**base, "MPLCONFIGDIR": str(cwd / ".mpl"), **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def fakegang(self, args: list[str], *, cwd: Path, timeout: float = 300):
        return self.run_python(["-m", "fakegang.cli.main", *args], cwd=cwd, timeout=timeout)

    @staticmethod
    def workdir() -> Path:
        return Path(tempfile.mkdtemp(prefix="fakegang-unpriv-"))

    @staticmethod
    def remove(path: Path) -> None:
        for p in [path, *path.rglob("*")]:
            with contextlib.suppress(OSError):
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
        shutil.rmtree(path, ignore_errors=True)
