"""`fakegang report RUN_ID`: a self-contained HTML page plus PNGs for one training run.

Reads the run's episodes (metrics.jsonl, else the database's `episodes` table) and the `steps`
of the episodes it draws; writes `index.html`, the learning-curve PNGs and one PNG per chosen
episode into the output directory. Works offline: matplotlib (Agg) and networkx only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fakegang.graph.context import STATE_DIR
from fakegang.report.charts import CHARTS
from fakegang.report.data import ReportError, choose_episodes, load_run, steps_of
from fakegang.report.html import render
from fakegang.report.network import draw_episode, replay


def build_report(
    run_id: str,
    *,
    db: str | Path,
    out_dir: str | Path | None = None,
    log_dir: str | Path | None = None,
    episodes: list[int] | None = None,
    say: Callable[[str], None] | None = None,
    verbose: bool = False,
) -> Path:
    """Write the report of `run_id` (`latest`: the latest training run); returns the path of its
    index.html. `say` gets which run was chosen and the run's LLM failures (each failed call
    too with `verbose`). By default the report goes to reports/RUN_ID in the project's state
    directory."""
    data = load_run(run_id, db, log_dir)
    if say is not None:
        if run_id == "latest":
            n = len(data.rows)
            say(
                f"latest training run: {data.run_id} (started {data.run.get('started_at')}, "
                f"{n} episode{'s' * (n != 1)} finished, {data.run.get('status')})"
            )
        for line in data.llm_failures_verbose if verbose else data.llm_failures:
            say(line if line.startswith(" ") else f"LLM: {line}")
        for note in data.log_only:
            say(f"note: {note}")
    out = Path(out_dir) if out_dir else Path(STATE_DIR) / "reports" / data.run_id
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot create the output directory {out}: {exc}") from exc
    charts = []
    for name, title, draw in CHARTS:
        draw(data.rows, out / name)
        charts.append((name, title))
    by_episode = {r["episode"]: r for r in data.rows}
    drawn = []
    for number, why in choose_episodes(data.rows, episodes):
        row = by_episode[number]
        thread_id = data.thread_of.get(number) or row.get("thread_id")
        steps = steps_of(data.db_path, thread_id) if thread_id else []
        if not steps:
            data.notes.append(f"episode {number} has no stored steps: not drawn")
            continue
        rep = replay(row["task"], row["seed"], steps)
        png = f"episode_{number:03d}.png"
        title = f"Episode {number} ({why}) — {row['task']} seed {row['seed']}"
        draw_episode(rep, out / png, title)
        drawn.append({"row": row, "why": why, "replay": rep, "png": png})
    from fakegang.report.learning import learning_section

    learned = learning_section(data.db_path, data.rows, out)
    index = out / "index.html"
    index.write_text(render(data, charts, drawn, learned), encoding="utf-8")
    return index
