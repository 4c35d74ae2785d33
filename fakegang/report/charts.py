"""Learning-curve PNGs of a run (matplotlib, Agg backend: no display, no network)."""

from __future__ import annotations

from pathlib import Path

from fakegang.report.data import WIN_WINDOW, phases, sliding_win_rate
from fakegang.tools.learning.alpha import MODE_COLUMNS

TASK_COLORS = {"easy": "#2ca02c", "medium": "#ff7f0e", "hard": "#d62728"}
MODE_COLORS = {"agree": "#2ca02c", "rule_override": "#7f7f7f", "llm": "#ff7f0e"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _phase_lines(ax, rows: list[dict]) -> None:
    """Dotted lines between curriculum phases, and whole-number episode ticks."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for p in phases(rows)[1:]:
        ax.axvline(p["first"] - 0.5, color="black", ls=":", lw=0.8)


def _task_legend(ax, rows: list[dict]) -> None:
    from matplotlib.patches import Patch

    tasks = list(dict.fromkeys(r["task"] for r in rows))
    ax.legend(
        handles=[Patch(color=TASK_COLORS.get(t, "grey"), label=t) for t in tasks],
        fontsize=8,
        loc="best",
    )


def curves_png(rows: list[dict], path: Path, window: int = WIN_WINDOW) -> Path:
    """Win rate (sliding window per task), grader score and reward per episode."""
    plt = _plt()
    ep = [r["episode"] for r in rows]
    colors = [TASK_COLORS.get(r["task"], "grey") for r in rows]
    fig, axes = plt.subplots(3, 1, figsize=(10, 8.5), sharex=True, dpi=100)
    wr = sliding_win_rate(rows, window)
    axes[0].plot(ep, wr, color="black", lw=1.2, zorder=1)
    axes[0].scatter(ep, wr, c=colors, s=22, zorder=2)
    axes[0].set_ylim(-0.05, 1.05)
    axes[0].set_ylabel(f"win rate\n(last {window} of task)")
    axes[0].set_title("Learning curves")
    _task_legend(axes[0], rows)
    grader = [r["grader_score"] or 0.0 for r in rows]
    axes[1].plot(ep, grader, color="black", lw=0.8, zorder=1)
    axes[1].scatter(
        ep, grader, c=colors, s=26, zorder=2, marker="o", edgecolors="black", linewidths=0.3
    )
    for r in rows:
        if not r["won"]:
            axes[1].scatter(r["episode"], r["grader_score"] or 0.0, marker="x", c="black", s=40)
    axes[1].set_ylim(-0.05, 1.05)
    axes[1].set_ylabel("grader score\n(x = loss)")
    axes[2].bar(ep, [r["reward"] for r in rows], color=colors)
    axes[2].axhline(0, color="black", lw=0.6)
    axes[2].set_ylabel("episode reward")
    axes[2].set_xlabel("episode")
    for ax in axes:
        _phase_lines(ax, rows)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def alpha_png(rows: list[dict], path: Path) -> Path:
    """α used by each episode, one line per task."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 3.6), dpi=100)
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == task]
        ax.plot(
            [r["episode"] for r in mine],
            [r["alpha_used"] for r in mine],
            marker="o",
            ms=4,
            drawstyle="steps-post",
            color=TASK_COLORS.get(task, "grey"),
            label=task,
        )
    ax.set_ylim(0, 1)
    ax.set_ylabel("α (LLM trust)")
    ax.set_xlabel("episode")
    ax.set_title("α per task: the rule confidence below which the LLM is asked")
    _phase_lines(ax, rows)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def modes_png(rows: list[dict], path: Path) -> Path:
    """Per episode: how many actions were agree / rule_override / llm decisions (stacked)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 3.8), dpi=100)
    ep = [r["episode"] for r in rows]
    bottom = [0] * len(rows)
    for mode, key in MODE_COLUMNS.items():
        values = [r[key] for r in rows]
        ax.bar(ep, values, bottom=bottom, color=MODE_COLORS[mode], label=mode)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("actions")
    ax.set_xlabel("episode")
    ax.set_title("Decision modes per episode")
    _phase_lines(ax, rows)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def llm_png(rows: list[dict], path: Path) -> Path:
    """LLM calls (bars) and tokens (line) per episode."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 3.8), dpi=100)
    ep = [r["episode"] for r in rows]
    ax.bar(ep, [r["llm_calls"] for r in rows], color="#17becf", label="LLM calls")
    ax.set_ylabel("LLM calls", color="#17becf")
    ax.set_xlabel("episode")
    twin = ax.twinx()
    twin.plot(ep, [r["llm_tokens"] for r in rows], color="#9467bd", marker=".", label="tokens")
    twin.set_ylabel("LLM tokens (in + out)", color="#9467bd")
    twin.set_ylim(bottom=0)
    ax.set_title("LLM usage per episode")
    _phase_lines(ax, rows)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


CHARTS = (
    ("curves.png", "Win rate, grader score and reward", curves_png),
    ("alpha.png", "α per task", alpha_png),
    ("modes.png", "Decision modes", modes_png),
    ("llm.png", "LLM calls and tokens", llm_png),
)
