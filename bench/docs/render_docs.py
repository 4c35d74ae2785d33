"""Render everything in the docs that is made from the code or from measurements, in one place.

    python bench/docs/render_docs.py            # rewrite it all in place
    python bench/docs/render_docs.py --check    # change nothing; exit 1 and list what is stale

Three kinds, each in its own module of bench/docs/:
* rendered blocks (blocks.py): text between `<!-- render:NAME -->` and `<!-- /render:NAME -->`
  in README.md and docs/, made from `bench/results/latest.json` (what `make bench` measured
  last, bench_blocks.py), the kept campaigns under bench/results/campaigns/ (kept.py) and the
  code itself (code_blocks.py: the task catalogue, the graph's Mermaid drawing, the settings);
* the campaign pictures in docs/img (figures.py), drawn from the kept campaigns;
* whole generated pages under docs/reference/ (reference.py): the CLI and the HTTP routes.
So a figure is typed nowhere: after `make bench` or keeping a campaign, run this script; the docs
tests fail while anything is stale or edited by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))  # the checkout: bench.* imports

from bench.docs import blocks, figures, reference  # noqa: E402
from bench.docs.md import RenderError  # noqa: E402


def run(root: Path, results_path: Path, check: bool) -> list[str]:
    """Render (or, with `check`, compare) blocks, generated pages and pictures; returns one
    `where: what` line for each stale one."""
    results = {**json.loads(results_path.read_text()), "_root": str(root)}
    stale = reference.render_pages(root, check)
    stale += blocks.render_blocks(root, results, check)
    stale += figures.render_figures(root, check)
    return stale


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if anything is stale"
    )
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout to render (default: here)")
    p.add_argument(
        "--results",
        type=Path,
        default=None,
        help="bench results JSON (default: bench/results/latest.json under --root)",
    )
    args = p.parse_args(argv)
    results = args.results or args.root / "bench" / "results" / "latest.json"
    try:
        stale = run(args.root, results, args.check)
    except (RenderError, OSError, json.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"error: {results} lacks the bench section or field {exc}", file=sys.stderr)
        return 2
    if args.check:
        if stale:
            fix = "python bench/docs/render_docs.py"
            print(f"stale rendered docs (run `{fix}`):", file=sys.stderr)
            print("\n".join(f"  {s}" for s in stale), file=sys.stderr)
            return 1
        print("rendered docs are current")
        return 0
    print(f"re-rendered {len(stale)} part(s)" + "".join(f"\n  {s}" for s in stale))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
