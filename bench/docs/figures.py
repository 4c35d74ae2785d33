"""The campaign pictures in docs/img, drawn from the kept campaign JSON by the same code that
draws `fakegang campaign --out`'s campaign.png (`fakegang.runs.campaign.write_outputs`).

docs/img/figures.json records, per picture, the SHA-256 of its source JSON, of the drawing code
and of the PNG as drawn. A picture is stale when any of the three differs: new kept results, a
changed drawing, or a PNG replaced by hand. Hashes rather than redrawn bytes: matplotlib's PNG
bytes depend on its version and FreeType build, so a redraw elsewhere could differ with nothing
stale, and the check stays instant (drawing takes seconds).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import tempfile
from pathlib import Path

from bench.docs.kept import KEPT
from bench.docs.md import RenderError

IMG = Path("docs") / "img"
MANIFEST = IMG / "figures.json"
#: Each picture and the kept campaign (bench/results/campaigns/NAME.json) it draws.
FIGURES = {
    "campaign-medium-mixed.png": "medium-mixed-fake",
    "campaign-hard-mixed-pivots.png": "hard-mixed-fake",
}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def drawing_sha() -> str:
    """The drawing code's fingerprint: the campaign picture's functions and styles."""
    from fakegang.runs import campaign

    parts = [inspect.getsource(campaign.write_outputs), repr(campaign.MODE_STYLES)]
    strip = getattr(campaign, "_operator_strip", None)
    if strip is not None:
        parts.append(inspect.getsource(strip))
    return _sha("\n".join(parts).encode())


def draw(summary: dict, dest: Path) -> None:
    """`summary`'s campaign.png, drawn in a scratch folder and copied to `dest`."""
    from fakegang.runs.campaign import write_outputs

    with tempfile.TemporaryDirectory(prefix="fakegang-figure-") as tmp:
        _, png = write_outputs(summary, tmp)
        shutil.copyfile(png, dest)


def render_figures(root: Path, check: bool) -> list[str]:
    """Redraw (with `check`, only compare) every picture; `docs/img/NAME.png: figure` for each
    stale one."""
    manifest_path = root / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    drawing = drawing_sha()
    stale: list[str] = []
    updated: dict[str, dict[str, str]] = {}
    for png, name in FIGURES.items():
        source = KEPT / f"{name}.json"
        if not (root / source).exists():
            raise RenderError(f"{source} is missing (bench/experiments/keep_campaign.py keeps it)")
        data = (root / source).read_bytes()
        want = {"source": str(source), "source_sha256": _sha(data), "drawing_sha256": drawing}
        path = root / IMG / png
        have = manifest.get(png, {})
        current = (
            path.exists()
            and have.get("png_sha256") == _sha(path.read_bytes())
            and all(have.get(k) == v for k, v in want.items())
        )
        if current:
            updated[png] = have
            continue
        stale.append(f"{IMG / png}: figure")
        if not check:
            draw(json.loads(data), path)
            updated[png] = {**want, "png_sha256": _sha(path.read_bytes())}
    if not check and updated != manifest:
        manifest_path.write_text(json.dumps(updated, indent=1, sort_keys=True) + "\n")
    return stale
