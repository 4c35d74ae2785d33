"""One episode as a picture: the network the agent uncovered, the hidden truth, and its actions.

The episode is replayed in-process from its `steps` rows (the environment is deterministic in
`(task, seed)` and the action sequence), which gives every intermediate observation without
storing them; the hidden ring comes from `generate_network(task, seed).gang_ids` (the same
network the episode was played on). Each replayed message is checked against the stored one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fakegang.tools.rules.actions import parse_step
from fakegang_env.engine import Episode

#: Per step's `mode` (graph/nodes/arbitrate.py): `rule_alone` is the rule with the LLM not asked.
MODE_COLORS = {
    "agree": "#2ca02c",
    "rule_override": "#8c8c8c",
    "rule_alone": "#c7c7c7",
    "llm": "#ff7f0e",
}
ACTION_ROWS = ["inspect", "investigate_network", "flag", "unflag", "submit"]
RING, INNOCENT = "#d62728", "#1f77b4"


@dataclass
class Replay:
    task: str
    seed: int
    gang: set[str]
    starting: list[str]
    events: list[dict] = field(default_factory=list)
    final: dict = field(default_factory=dict)
    diverged_at: int | None = None

    @property
    def never_seen(self) -> list[str]:
        seen = set(self.final.get("visible_account_ids", []))
        return sorted(self.gang - seen)


def replay(task: str, seed: int, steps: list[dict]) -> Replay:
    """Re-apply the stored actions to a fresh episode of (task, seed)."""
    ep = Episode(task, seed)
    out = Replay(task, seed, set(ep.network.gang_ids), list(ep.network.starting_ids))
    obs = ep.observation()
    for s in steps:
        action_type, account_id, trace = parse_step(s["action"])
        obs = ep.step(action_type, account_id, trace)
        if out.diverged_at is None and obs["message"] != s["message"]:
            out.diverged_at = s["idx"]
        out.events.append(
            {
                "idx": s["idx"],
                "action": s["action"],
                "type": action_type,
                "account": account_id,
                "mode": s["mode"],
                "rule_confidence": s["rule_confidence"],
                "llm_status": s["llm_status"],
                "reward": obs["reward"],
                "return": obs["episode_return"],
                "message": obs["message"],
                "in_ring": account_id in out.gang if account_id else None,
            }
        )
    out.final = obs
    return out


def draw_episode(rep: Replay, path: Path, title: str) -> Path:
    """Network (top) and action timeline (bottom) of one replayed episode, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.lines import Line2D

    final = rep.final
    visible = list(final.get("visible_account_ids", []))
    inspected = set(final.get("inspected_ids", []))
    flagged = set(final.get("flagged_ids", []))
    g = nx.DiGraph()
    g.add_nodes_from(visible)
    for src, dsts in (final.get("graph_edges") or {}).items():
        g.add_edges_from((src, d) for d in dsts if d in g)
    pos = nx.spring_layout(g.to_undirected(), seed=7, k=1.2 / max(1, len(g)) ** 0.5)

    fig = plt.figure(figsize=(11, 10.5), dpi=100)
    ax = fig.add_axes((0.02, 0.34, 0.96, 0.60))
    nx.draw_networkx_edges(g, pos, ax=ax, alpha=0.18, arrows=False, width=0.6)
    for shown, size, alpha in ((False, 40, 0.35), (True, 150, 0.95)):
        nodes = [n for n in visible if (n in inspected) == shown]
        nx.draw_networkx_nodes(
            g,
            pos,
            nodelist=nodes,
            ax=ax,
            node_size=size,
            alpha=alpha,
            node_color=[RING if n in rep.gang else INNOCENT for n in nodes],
            edgecolors=[_outline(n, flagged, rep.gang) for n in nodes],
            linewidths=[2.5 if n in flagged else 0.3 for n in nodes],
        )
    starts = [n for n in rep.starting if n in pos]
    nx.draw_networkx_labels(g, pos, labels={n: "S" for n in starts}, ax=ax, font_size=7)
    tp = len(flagged & rep.gang)
    ax.set_title(
        f"{title}\n{len(visible)} accounts seen, {len(inspected)} inspected, "
        f"{len(flagged)} flagged ({tp} truly in the ring); ring size {len(rep.gang)}, "
        f"{len(rep.never_seen)} ring members never seen",
        fontsize=10,
    )
    ax.axis("off")
    legend = [
        Line2D([], [], ls="", marker="o", color=RING, label="ring member (truth)", ms=8),
        Line2D([], [], ls="", marker="o", color=INNOCENT, label="innocent (truth)", ms=8),
        Line2D([], [], ls="", marker="o", color="grey", alpha=0.35, label="seen only", ms=5),
        Line2D([], [], ls="", marker="o", mfc="white", mec="black", mew=2.5, label="flagged"),
        Line2D([], [], ls="", marker="o", mfc="white", mec="#e377c2", mew=2.5, label="wrong flag"),
        Line2D([], [], ls="", marker="$S$", color="black", label="starting account"),
    ]
    ax.legend(handles=legend, loc="lower left", fontsize=8, framealpha=0.85)
    _timeline(fig.add_axes((0.15, 0.05, 0.78, 0.22)), rep)
    fig.savefig(path)
    plt.close(fig)
    return path


def _outline(node: str, flagged: set[str], gang: set[str]) -> str:
    if node not in flagged:
        return "white"
    return "black" if node in gang else "#e377c2"


def _timeline(ax, rep: Replay) -> None:
    """Actions over time: one row per action type, colour = decision mode, filled = ring target."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    for e in rep.events:
        y = ACTION_ROWS.index(e["type"]) if e["type"] in ACTION_ROWS else len(ACTION_ROWS)
        color = MODE_COLORS.get(e["mode"], "black")
        filled = e["in_ring"] is True
        ax.scatter(
            e["idx"],
            y,
            s=42,
            marker="o",
            facecolors=color if filled or e["in_ring"] is None else "white",
            edgecolors=color,
            linewidths=1.5,
        )
    ax.set_yticks(range(len(ACTION_ROWS)), ACTION_ROWS, fontsize=8)
    ax.set_ylim(-0.7, len(ACTION_ROWS) - 0.3)
    ax.set_xlabel("action index")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="x", alpha=0.3)
    twin = ax.twinx()
    twin.plot([e["idx"] for e in rep.events], [e["return"] for e in rep.events], color="#9467bd")
    twin.set_ylabel("episode return", color="#9467bd", fontsize=8)
    handles = [
        Line2D([], [], ls="", marker="o", color=c, label=m) for m, c in MODE_COLORS.items()
    ] + [
        Line2D([], [], ls="", marker="o", mfc="black", mec="black", label="filled: target in ring"),
        Line2D([], [], ls="", marker="o", mfc="white", mec="black", label="hollow: innocent"),
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.28), ncol=5, fontsize=8)
