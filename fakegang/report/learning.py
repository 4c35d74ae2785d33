"""The report's "What the agent learned" section: rule weights per evidence family over the run's
episodes (one refit version per debrief), the trace yields its pivots were chosen by, the LLM's
credit and α, and the insights in words."""

from __future__ import annotations

import html
from pathlib import Path

from fakegang.tools.learning import credit_store, experience, insights, trace_yields
from fakegang.tools.learning.insights import FAMILIES
from fakegang.tools.learning.tactics_model import TacticsEstimate
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules.engine import load_weights
from fakegang_env.tactics import CHANNELS
from fakegang_env.traces import TRACES


def family_strengths(profile: dict, frontier: dict) -> dict[str, float]:
    """Sum of |weight| per evidence family (tools/learning/insights.py FAMILIES)."""
    return {
        fam: sum(abs(profile.get(n, 0.0)) for n in prof)
        + sum(abs(frontier.get(n, 0.0)) for n in front)
        for fam, (prof, front, _, _) in FAMILIES.items()
    }


def learning_section(db_path: str | Path, rows: list[dict], out_dir: Path) -> str:
    """HTML for the section (and weights.png in `out_dir`); empty when nothing was learned."""
    memory = Memory(db_path, file_read_only=True)  # a report writes nothing to the file
    try:
        threads = {r.get("thread_id"): r for r in rows}
        versions = [v for v in experience.version_history(memory) if v["thread_id"] in threads]
        credits = [c for c in credit_store.history(memory) if c["thread_id"] in threads]
        tasks = sorted({r["task"] for r in rows})
        learned = [i for t in tasks for i in insights.all_insights(memory, t)]
        yields = [y for y in trace_yields.history(memory) if y["thread_id"] in threads]
    finally:
        memory.close()
    if not versions and not credits and not learned and not yields:
        return ""
    parts = ["<h2>What the agent learned</h2>"]
    if versions:
        shipped = load_weights()
        base = family_strengths(shipped["profile"], shipped["frontier"])
        series = []
        for v in versions:
            s = family_strengths(v["profile"], v["frontier"])
            row = threads[v["thread_id"]]
            series.append((row["episode"], row["task"], {f: s[f] / base[f] for f in s if base[f]}))
        _weights_png(series, out_dir / "weights.png")
        parts.append(
            "<h3>Evidence weights after each debrief (share of the shipped weight)</h3>"
            '<img src="weights.png" alt="evidence weights per episode">'
        )
        parts.append(_tactics_table(versions, threads))
        parts.append(_learner_table(versions, threads))
    if yields:
        parts.append(_yields_table(yields, threads, out_dir))
    if credits:
        parts.append(
            "<h3>LLM credit per episode (disagreements judged by the debrief)</h3><table>"
            "<tr><th>episode</th><th>task</th><th>LLM better</th><th>LLM worse</th>"
            "<th>ties</th><th>LLM calls</th><th>actions</th><th>α used</th></tr>"
        )
        for c in credits:
            ep = threads[c["thread_id"]]["episode"]
            parts.append(
                f"<tr><td>{ep}</td><td>{html.escape(c['task'])}</td><td>{c['better']}</td>"
                f"<td>{c['worse']}</td><td>{c['ties']}</td><td>{c['llm_calls']}</td>"
                f"<td>{c['actions']}</td><td>{c['alpha']:.2f}</td></tr>"
            )
        parts.append("</table>")
    if learned:
        parts.append(
            "<h3>Insights (ExpeL-style; importance rises when later debriefs confirm them)</h3>"
            "<table><tr><th>task</th><th>status</th><th>importance</th><th>insight</th></tr>"
        )
        for i in learned:
            parts.append(
                f"<tr><td>{html.escape(i.task)}</td><td>{i.status}</td><td>{i.importance}</td>"
                f"<td class='left'>{html.escape(i.text)}</td></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def _tactics_table(versions: list[dict], threads: dict[str, dict]) -> str:
    """The operator's channel strengths each refit inferred (tools/learning/tactics_model.py); empty
    when no debrief showed drift, i.e. the shipped weights explained them all."""
    inferred = [v for v in versions if v.get("tactics")]
    if not inferred:
        return ""
    head = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in CHANNELS)
    parts = [
        "<h3>The operator's tactics as inferred from the debriefs</h3>"
        "<p>Channel strength ± sd (1: the classic ring's tell at full strength, 0: suppressed), "
        "estimated after each debrief the shipped weights no longer explained; the refit starts "
        "from the evidence model of these tactics. An sd near 0.7 means the debriefs said "
        "nothing about that channel; <span class='weak'>red</span>: weakened even one sd up.</p>"
        f"<table><tr><th>episode</th><th>task</th><th>weights</th>{head}</tr>"
    ]
    for v in inferred:
        found = TacticsEstimate(**v["tactics"])  # as stored by `as_json`
        weak = set(found.weakened())
        cells = "".join(
            f"<td{' class=weak' if c in weak else ''}>"
            f"{found.strength[c]:.2f} ± {found.sd[c]:.2f}</td>"
            for c in CHANNELS
        )
        row = threads[v["thread_id"]]
        parts.append(
            f"<tr><td>{row['episode']}</td><td>{html.escape(v['task'])}</td>"
            f"<td>v{v['version']}</td>{cells}</tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def _learner_table(versions: list[dict], threads: dict[str, dict]) -> str:
    """The learner of the current operator's reading, each time it changed (empty when no
    version fitted one: tools/learning/operator_model.py)."""
    rows, last = [], {}
    for v in versions:
        said = (v.get("learner") or {}).get("insight")
        if said and said != last.get(v["task"]):
            row = threads[v["thread_id"]]
            rows.append(
                f"<tr><td>{row['episode']}</td><td>{html.escape(v['task'])}</td>"
                f"<td>v{v['version']}</td><td class='left'>{html.escape(said)}</td></tr>"
            )
        last[v["task"]] = said
    if not rows:
        return ""
    return (
        "<h3>The learner's reading of the operator</h3><p>Per trait, how well it alone still "
        "tells the current regime's members from innocents (boosted trees over the debriefs, "
        "tools/learning/operator_model.py); a row each time the reading changed.</p>"
        "<table><tr><th>episode</th><th>task</th><th>weights</th><th>reading</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _yields_table(yields: list[dict], threads: dict[str, dict], out_dir: Path) -> str:
    """Per episode and trace: the yield learned after its debrief (members a pivot from a member
    reveals), and the pivots it ran from members with the members / innocents on their pages."""
    by_thread: dict[str, dict[str, dict]] = {}
    for y in yields:
        by_thread.setdefault(y["thread_id"], {})[y["trace"]] = y
    ordered = sorted(by_thread.items(), key=lambda kv: threads[kv[0]]["episode"])
    series = [
        (threads[tid]["episode"], {t: r[t]["estimate"] for t in TRACES if t in r})
        for tid, r in ordered
    ]
    _yields_png(series, out_dir / "yields.png")
    head = "".join(f"<th>{t}</th>" for t in TRACES)
    parts = [
        "<h3>Trace yields after each debrief</h3>"
        "<p>Members a pivot from a member reveals, per trace, as learned from the debriefs (the "
        "next episode pins it and pivots on the traces that pay); in brackets the episode's "
        "pivots from members: pivots, members / innocents on their pages.</p>"
        '<img src="yields.png" alt="trace yields per episode">'
        f"<table><tr><th>episode</th><th>task</th>{head}</tr>"
    ]
    for tid, r in ordered:
        row = threads[tid]
        cells = ""
        for t in TRACES:
            y = r.get(t)
            if y is None:
                cells += "<td></td>"
                continue
            est = "" if y["estimate"] is None else f"{y['estimate']:.1f}"
            ran = (
                f" ({y['pivots']}: {y['page_members']} / {y['page_innocents']})"
                if y["pivots"]
                else ""
            )
            cells += f"<td>{est}{ran}</td>"
        parts.append(
            f"<tr><td>{row['episode']}</td><td>{html.escape(row['task'])}</td>{cells}</tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def _yields_png(series: list[tuple[int, dict[str, float]]], path: Path) -> None:
    from fakegang.report.charts import _plt

    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 3.5))
    episodes = [e for e, _ in series]
    for t in TRACES:
        ax.plot(episodes, [s.get(t) for _, s in series], marker=".", label=t)
    ax.set_xlabel("episode")
    ax.set_ylabel("members per pivot from a member")
    ax.legend(fontsize=7, ncol=5)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _weights_png(series: list[tuple[int, str, dict[str, float]]], path: Path) -> None:
    from fakegang.report.charts import _plt

    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    episodes = [e for e, _, _ in series]
    for fam in FAMILIES:
        ax.plot(episodes, [s.get(fam, 1.0) for _, _, s in series], marker=".", label=fam)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xlabel("episode")
    ax.set_ylabel("weight / shipped weight")
    ax.legend(fontsize=7, ncol=4)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
