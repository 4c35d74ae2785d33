"""The trace catalogue as markdown, for the docs renderer (bench/docs/render_docs.py).

docs/pivots.md shows the traces table and the generations-by-trace table; fakegang_env/README.md
lists the trace names in its actions line. All three are rendered from the catalogue in force,
so a new kind shows up in the docs by re-rendering them.
"""

from __future__ import annotations

from fakegang_env.tactics import GENERATIONS, MIXED
from fakegang_env.trace_catalogue import trace_kinds
from fakegang_env.traces import trace_strengths

__all__ = ["generations_table_markdown", "trace_list_markdown", "trace_table_markdown"]


def trace_table_markdown() -> str:
    """docs/pivots.md "The traces": what each trace is, its channel, the ring at full strength
    and under a weakened channel."""
    lines = [
        "| trace | what it is | channel | the ring at full strength | a weakened channel |",
        "|---|---|---|---|---|",
    ]
    for k in trace_kinds():
        what = k.detail or k.note
        lines.append(
            f"| `{k.name}` | {what} | `{k.channel}` | {k.at_full_strength} | {k.weakened} |"
        )
    return "\n".join(lines)


def _strength(s: float) -> str:
    return "1" if s == 1 else f"**{s:g}**"


def generations_table_markdown() -> str:
    """docs/pivots.md "The generations and the traces": each generation's strength per trace
    (its channel's; weakened ones in bold), `mixed` drawn per seed."""
    names = [k.name for k in trace_kinds()]
    lines = [
        "| generation | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for name, playbook in GENERATIONS.items():
        cells = [_strength(s) for s in trace_strengths(playbook).values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append(f"| {MIXED} | " + " | ".join(["per seed"] * len(names)) + " |")
    return "\n".join(lines)


def trace_list_markdown() -> str:
    """fakegang_env/README.md's trace names: "`ip`, `photo`, ... or `schedule`"."""
    names = [f"`{k.name}`" for k in trace_kinds()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
