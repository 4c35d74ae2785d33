"""Blocks rendered from the code itself, not from a measurement: the task catalogue, the
compiled graph's Mermaid drawing, the CLI's model defaults, the run settings, the evasion
budget's prices and the trace catalogue (fakegang_env/trace_docs.py)."""

from __future__ import annotations

from bench.docs.md import Results, table


def render_tasks(_: Results) -> str:
    from fakegang_env.tasks import TASKS

    rows = []
    for t in TASKS.values():
        ring = f"{t.gang_min}" if t.gang_min == t.gang_max else f"{t.gang_min}–{t.gang_max}"
        evasion = (
            "at step"
            + ("s " if len(t.evasion_steps) > 1 else " ")
            + ", ".join(map(str, t.evasion_steps))
            if t.evasion_steps
            else "none"
        )
        rows.append(
            [
                f"`{t.name}`",
                str(t.n_accounts),
                ring,
                str(t.max_steps),
                str(t.n_starting),
                f"recall ≥ {t.win_recall}, precision ≥ {t.win_precision}",
                evasion,
            ]
        )
    head = ["task", "accounts", "ring (hidden)", "max_steps", "starting ids", "win rule", "evasion"]
    return table(head, rows)


def render_graph(_: Results) -> str:
    from fakegang.graph.graph import graph

    return "```mermaid\n" + graph.get_graph().draw_mermaid().strip() + "\n```"


def render_model_defaults(_: Results) -> str:
    """The chat model each command uses when `--model` is not given, read from the CLI parser."""
    import argparse
    import dataclasses

    from fakegang.cli.main import build_parser
    from fakegang.graph.context import Context

    context_default = {f.name: f.default for f in dataclasses.fields(Context)}["model"]
    rows = []
    for action in build_parser()._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, sub in action.choices.items():
            for opt in sub._actions:
                if opt.dest == "model":
                    default = opt.default or context_default  # None: the run settings decide
                    rows.append([f"`fakegang {name}`", f"`{default}`"])
    return table(["command", "`--model` when not given"], rows)


def render_settings(_: Results) -> str:
    """The run settings: one row per `Context` field, with its flag, variable and default."""
    import dataclasses

    from fakegang.graph.context import Context, env_var

    rows = [
        [
            f"`{f.metadata['flag']}`" if f.metadata.get("flag") else "(Studio form, Python)",
            f"`{env_var(f.name)}`",
            f"`{f.default}`",
            f.metadata["description"].replace("|", "\\|"),
        ]
        for f in dataclasses.fields(Context)
    ]
    return table(["flag", "environment variable", "default", "what"], rows)


def render_evasion_budget(_: Results) -> str:
    """The adaptive operator's prices, from fakegang_env/evasion_budget.py."""
    from fakegang_env.evasion_budget import BUDGET, COSTS, FIXED_CHANNELS

    rows = [[f"`{c}`", f"{p.cost:.2f}", p.reason] for c, p in COSTS.items()]
    rows += [[f"`{c}`", "—", "not for sale: the task's own adaptation, played at 1.0"]
             for c in FIXED_CHANNELS]  # fmt: skip
    total = sum(p.cost for p in COSTS.values())
    return (
        table(["channel", "cost of hiding it fully", "why"], rows)
        + f"\n\nA channel at strength s costs `cost × (1 − s)`. Budget per round: **{BUDGET}** "
        f"(hiding every channel would cost {total:.1f})."
    )


def render_traces(_: Results) -> str:
    """The trace kinds: what each is, its channel, the ring at full and weakened strength."""
    from fakegang_env.trace_docs import trace_table_markdown

    return trace_table_markdown()


def render_trace_generations(_: Results) -> str:
    """Each generation's strength on each trace (a trace's strength is its channel's)."""
    from fakegang_env.trace_docs import generations_table_markdown

    return generations_table_markdown()


def render_trace_list(_: Results) -> str:
    """The trace names a pivot takes, as a phrase."""
    from fakegang_env.trace_docs import trace_list_markdown

    return trace_list_markdown()
