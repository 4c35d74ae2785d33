"""Keep a campaign's JSON under bench/results/campaigns/, stamped with when and where it ran, so
the docs render its figures (bench/docs/render_docs.py) instead of typing them.

    fakegang campaign --task hard --tactics mixed --campaigns 0-19 --rounds 10 --model fake \\
        --compare --json --out DIR
    python bench/experiments/keep_campaign.py DIR/campaign.json hard-mixed-fake

`bench/experiments/pivot_shift.py --json > FILE` output is kept the same way (NAME `pivot-shift`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path

KEEP = Path(__file__).resolve().parents[1] / "results" / "campaigns"


def stamp(summary: dict, measured_at: datetime, commit: str | None = None) -> dict:
    """The summary with `measured_at` (the file's time), `machine` (cores, Python) and, when
    known, the `commit` of the code that played it."""
    return {
        **summary,
        "measured_at": measured_at.isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cores, CPython {platform.python_version()}",
        **({"commit": commit} if commit else {}),
    }


def head_commit() -> str | None:
    """This checkout's commit (short), or None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=KEEP.parent, capture_output=True, text=True, check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a campaign.json (or pivot_shift --json output)")
    ap.add_argument("name", help="file name under bench/results/campaigns/, without .json")
    ap.add_argument("--into", type=Path, default=KEEP, help="keep it here instead")
    ap.add_argument(
        "--commit",
        default=None,
        help="the commit whose code played the campaign (default: this checkout's HEAD)",
    )
    a = ap.parse_args(argv)
    summary = json.loads(a.source.read_text())
    when = datetime.fromtimestamp(a.source.stat().st_mtime, UTC)
    a.into.mkdir(parents=True, exist_ok=True)
    out = a.into / f"{a.name}.json"
    out.write_text(json.dumps(stamp(summary, when, a.commit or head_commit()), indent=1) + "\n")
    print(f"kept {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
