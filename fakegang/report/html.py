"""The report's single HTML page: inline CSS, relative PNG links, no script, no CDN.

Numbers are written with `num()` (the value as stored, at most 4 decimals), and every table
cell carries `data-key` so a test can read the page back and compare it with metrics.jsonl.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import Any

from fakegang.report.data import RunData
from fakegang.tools.memory.episode_row import REPORT_KEYS

#: The episode table's columns: the report subset of the one episode row.
EPISODE_KEYS = REPORT_KEYS
PHASE_KEYS = (
    "phase",
    "task",
    "first",
    "last",
    "episodes",
    "wins",
    "win_rate",
    "mean_reward",
    "mean_grader",
    "mean_recall",
    "mean_precision",
    "mean_steps",
    "alpha_first",
    "alpha_last",
    "agree",
    "rule_override",
    "llm",
    "llm_calls",
    "llm_tokens",
)
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;
max-width:1180px;color:#222;padding:0 12px}
h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}th{background:#f3f3f3}
td.l,th.l{text-align:left}tr.win td.won{color:#2a7d2a;font-weight:600}
tr.loss td.won{color:#b22;font-weight:600}.note{color:#7a4b00;background:#fff6e0;padding:4px 8px}
img{max-width:100%;border:1px solid #eee;margin:6px 0}.kv td{text-align:left}
.small{font-size:11px;color:#666}.weak{color:#b22;font-weight:600}
"""


def num(value: Any) -> str:
    """A metric as text: bools as true/false, floats rounded to 4 decimals, None as –."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 4))
    return html.escape(str(value))


def _table(rows: list[dict], keys: tuple[str, ...], row_attr: str, left: set[str]) -> str:
    head = "".join(f'<th class="{"l" if k in left else ""}">{k}</th>' for k in keys)
    body = []
    for r in rows:
        cls = ""
        if "won" in r:
            cls = ' class="win"' if r["won"] else ' class="loss"'
        cells = "".join(
            f'<td data-key="{k}" class="{k}{" l" if k in left else ""}">{num(r.get(k))}</td>'
            for k in keys
        )
        body.append(f'<tr{cls} data-{row_attr}="{r[row_attr]}">{cells}</tr>')
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _summary(data: RunData) -> str:
    rows = data.rows
    n = len(rows)
    wins = sum(bool(r["won"]) for r in rows)
    items = [
        ("run id", data.run_id),
        ("model", data.run.get("model")),
        ("status", data.run.get("status")),
        ("started", data.run.get("started_at")),
        ("episodes", n),
        ("wins", f"{wins} ({100 * wins / n:.0f} %)" if n else "0"),
        ("mean grader", num(round(sum(r["grader_score"] or 0 for r in rows) / n, 4))),
        ("mean reward", num(round(sum(r["reward"] for r in rows) / n, 4))),
        ("LLM calls", sum(r["llm_calls"] for r in rows)),
        ("LLM tokens", sum(r["llm_tokens"] for r in rows)),
        ("data", data.source),
        ("database", str(data.db_path)),
    ]
    cells = "".join(
        f'<tr><th class="l">{k}</th><td data-key="{k}">{html.escape(str(v))}</td></tr>'
        for k, v in items
    )
    return f'<table class="kv">{cells}</table>'


def _episode_section(ep: dict) -> str:
    row, why, rep, png = ep["row"], ep["why"], ep["replay"], ep["png"]
    head = (
        f'<h3 id="ep{row["episode"]}">Episode {row["episode"]} ({html.escape(why)}): '
        f"{row['task']} seed {row['seed']}, {'WIN' if row['won'] else 'LOSS'}, "
        f"grader {num(row['grader_score'])}</h3>"
        f"<p class='small'>{html.escape(row['final_message'] or '')}</p>"
    )
    if rep.diverged_at is not None:
        head += (
            f"<p class='note'>The replay diverged from the stored messages at action "
            f"{rep.diverged_at}: the picture may not match what the agent saw.</p>"
        )
    lines = []
    for e in rep.events:
        truth = {True: "ring", False: "innocent", None: ""}[e["in_ring"]]
        lines.append(
            f"<tr><td>{e['idx']}</td><td class='l'>{html.escape(e['action'])}</td>"
            f"<td class='l'>{e['mode']}</td><td>{num(e['rule_confidence'])}</td>"
            f"<td class='l'>{html.escape(e['llm_status'] or '')}</td><td class='l'>{truth}</td>"
            f"<td>{num(e['reward'])}</td><td class='l'>{html.escape(e['message'][:110])}</td></tr>"
        )
    timeline = (
        "<details><summary>Action timeline (table)</summary><table><tr><th>#</th>"
        "<th class='l'>action</th><th class='l'>mode</th><th>rule conf.</th>"
        "<th class='l'>LLM</th><th class='l'>target truth</th><th>reward</th>"
        f"<th class='l'>message</th></tr>{''.join(lines)}</table></details>"
    )
    return f'{head}<img src="{png}" alt="episode {row["episode"]} network">{timeline}'


def operator_section(data: RunData) -> str:
    """An adaptive campaign's operator, round by round, as it was revealed after each round."""
    if not data.operator:
        return ""
    rows = []
    for r in data.operator:
        weak = ", ".join(
            f"{c.replace('_', ' ')} {v:.1f}" for c, v in r["playbook"].items() if v < 1.0
        )
        rows.append(
            f"<tr class='{'win' if r['won'] else 'loss'}'><td>{r['episode']}</td>"
            f"<td>{'WIN' if r['won'] else 'LOSS'}</td><td>{r['caught']}/{r['members']}</td>"
            f"<td>{num(r['survival'])}</td><td class='l'>{html.escape(weak or 'classic')}</td>"
            f"<td>{num(r['cost'])}</td><td class='l'>{html.escape(r['reason'])}</td></tr>"
        )
    return (
        "<h2>The operator</h2><p class='small'>An adaptive campaign: after each round the ring's "
        "operator read its takedown list and chose the next playbook (channels below 1.0 are "
        "weakened; revealed only once each round had ended).</p><table><tr><th>episode</th>"
        "<th>agent</th><th>caught</th><th>survival</th><th class='l'>weakened channels</th>"
        f"<th>cost</th><th class='l'>why the operator played it</th></tr>{''.join(rows)}</table>"
    )


def render(
    data: RunData, charts: list[tuple[str, str]], episodes: list[dict], learned: str = ""
) -> str:
    """The page: summary, learning curves, phase table, chosen episodes, all episodes."""
    from fakegang.report.data import phases

    notes = "".join(f"<p class='note'>{html.escape(n)}</p>" for n in data.notes)
    imgs = "".join(
        f'<h3>{html.escape(title)}</h3><img src="{name}" alt="{html.escape(title)}">'
        for name, title in charts
    )
    eps = "".join(_episode_section(e) for e in episodes) or "<p>No episode chosen.</p>"
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>fakegang report {html.escape(data.run_id)}</title><style>{CSS}</style></head>"
        f"<body><h1>fakegang training report — {html.escape(data.run_id)}</h1>"
        f"<p class='small'>generated {generated}; the model label `fake` is the deterministic "
        f"stand-in, not an LLM.</p>{notes}{_summary(data)}"
        f"<h2>Learning curves</h2>{imgs}{learned}{operator_section(data)}"
        f"<h2>Curriculum phases</h2>"
        f"{_table(phases(data.rows), PHASE_KEYS, 'phase', {'task'})}"
        f"<h2>Episodes in pictures</h2><p class='small'>Top: the accounts the agent saw (big = "
        f"inspected, faint = only seen), coloured by the hidden truth from "
        f"<code>generate_network(task, seed)</code>; thick outline = flagged. Bottom: each action "
        f"by type and decision mode (filled = its target is truly in the ring).</p>{eps}"
        f"<h2>All episodes</h2>{_table(data.rows, EPISODE_KEYS, 'episode', {'task'})}"
        "</body></html>"
    )
