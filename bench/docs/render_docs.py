"""Render the measured figures of README.md and docs/*.md from one place.

    python bench/docs/render_docs.py            # rewrite every rendered block in place
    python bench/docs/render_docs.py --check    # exit 1 and list the blocks that are stale

A rendered block sits between `<!-- render:NAME -->` and `<!-- /render:NAME -->`; its text is
made here from `bench/results/latest.json` (what `make bench` measured last), the task catalogue
(`fakegang_env/tasks.py`) and the compiled episode graph (its Mermaid drawing). So a figure is
typed nowhere: after `make bench`, run this script; the docs tests fail while a block is stale or
edited by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))  # the checkout: bench.* imports

BLOCK = re.compile(
    r"(?P<open><!-- render:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)"
    r"(?P<close><!-- /render:(?P=name) -->)",
    re.S,
)
OPENING = re.compile(r"<!-- render:([a-z0-9-]+) -->")

Results = dict[str, Any]


class RenderError(ValueError):
    """A page whose markers cannot be rendered (unknown name, unclosed block)."""


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _source(r: Results) -> str:
    """The line under every measured table: when, where and by what it was measured."""
    day, time = r["date"][:10], r["date"][11:16]
    quick = ", quick smoke settings" if r.get("quick") else ""
    return f"*Measured by `make bench` on {day} at {time} UTC ({r['machine']}{quick}).*"


def _table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


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
    return _table(head, rows)


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
    return _table(["command", "`--model` when not given"], rows)


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
    return _table(["flag", "environment variable", "default", "what"], rows)


def render_headline(r: Results) -> str:
    tr, rules, scale, camp = r["training"], r["rules_agent"]["quality"], r["scale"], r["campaigns"]
    calls = sum(v["llm_calls"] for v in tr["tasks"].values())
    actions = sum(sum(v["modes"].values()) for v in tr["tasks"].values())
    wins = sum(v["wins"] for v in tr["tasks"].values())
    runs = scale["runs"]
    n_camp = len(camp["campaigns"])
    rows = [
        [
            "`make run` (50-episode curriculum, local model)",
            f"{tr['process_s'] / 60:.1f} min, {wins}/{tr['episodes']} won, "
            f"LLM asked on {calls} of {actions} actions ({calls / actions:.1%})",
        ],
        *[
            [
                f"rules-only agent, {task} (seeds 0–49)",
                f"win {_pct(q['win_rate'])}, grader {q['mean_grader']:.3f}, "
                f"{q['mean_steps']:.1f} steps",
            ]
            for task, q in rules.items()
        ],
        *[
            [
                f"campaigns in-process, {key.replace('/', ' `')}` "
                f"({n_camp} × {camp['rounds']} rounds)",
                f"win-rate AUC {v['auc']['static']:.2f} static → {v['auc']['learning']:.2f} "
                "learning from debriefs",
            ]
            for key, v in camp.items()
            if isinstance(v, dict) and "auc" in v
        ],
        [
            "environment, hard task",
            f"{r['env']['in_process_steps_per_s']:,} steps/s in-process, "
            f"{r['env']['http_steps_per_s']:,} over HTTP, {r['env']['ws_steps_per_s']:,} over /ws",
        ],
        [
            "graph overhead per action",
            f"{r['graph']['overhead_ms_per_action']:.1f} ms (nodes + SQLite checkpoints)",
        ],
        [
            f"{scale['episodes']} hard episodes on {scale['concurrency']} cores",
            f"{runs['processes']['speedup']:.2f}x with worker processes, "
            f"{runs['ray']['speedup']:.2f}x with local Ray",
        ],
    ]
    kept = [_kept(r, n) for n in ("hard-mixed-fake", "hard-mixed-expert09")]
    fake, expert = kept
    rows.insert(
        1 + len(rules),
        [
            f"campaigns through the graph, hard `mixed` ({len(fake['campaigns'])} × "
            f"{fake['rounds']} rounds)",
            f"win-rate AUC {fake['auc']['static']:.3f} static → {fake['auc']['learning']:.3f} "
            f"learning (`fake` model), {expert['auc']['learning']:.3f} with `expert:0.9`; "
            f"oracle {fake['auc']['oracle']:.2f}",
        ],
    )
    return (
        _table(["what", "figure"], rows)
        + "\n\n"
        + _source(r)
        + "\n"
        + _measured(kept, "The graph campaigns: measured")
    )


def render_bench_table(r: Results) -> str:
    from bench.suite.bench_table import table  # the table `make bench` prints

    return "```text\n" + table(r) + "\n```\n\n" + _source(r)


def render_quality(r: Results) -> str:
    rows = []
    sources = [
        ("random", r["policies"], "policy"),
        ("naive", r["policies"], "policy"),
        ("rules-only agent", r["rules_agent"]["quality"], None),
        ("hybrid, local model", r["hybrid"]["quality"], None),
    ]
    for task in r["rules_agent"]["quality"]:
        for label, src, kind in sources:
            q = src[task][label] if kind else src[task]
            seeds = q["seeds"]
            rows.append(
                [
                    task,
                    label,
                    _pct(q["win_rate"]),
                    f"{q['mean_grader']:.3f}",
                    f"{q['mean_steps']:.1f}",
                    f"{q['llm_calls_per_episode']:.1f}",
                    f"{min(seeds)}–{max(seeds)}",
                ]
            )
    head = ["task", "player", "win", "grader", "steps", "LLM calls/ep", "seeds"]
    return _table(head, rows) + "\n\n" + _source(r)


def render_tactics(r: Results) -> str:
    t = r["tactics"]
    rows = [
        [
            x["task"],
            f"`{x['tactics']}`",
            _pct(x["agent"]["win_rate"]),
            f"{x['agent']['mean_grader']:.3f}",
            _pct(x["naive"]["win_rate"]),
            _pct(x["oracle"]["win_rate"]),
            f"{x['oracle']['mean_grader']:.3f}",
            f"{x['f1_classic_fitted']:.3f}",
            f"{x['f1_refit']:.3f}",
            _pct(x["refit_agent"]["win_rate"]),
        ]
        for x in t["rows"]
    ]
    head = [
        "task",
        "tactics",
        "agent win",
        "agent grader",
        "naive win",
        "oracle win",
        "oracle grader",
        "F1 classic-fitted",
        "F1 refit",
        "refit agent win",
    ]
    return (
        f"Test seeds {t['seeds']}, refit on seeds {t['train_seeds']}.\n\n"
        + _table(head, rows)
        + "\n\n"
        + _source(r)
    )


def render_campaigns(r: Results) -> str:
    c = r["campaigns"]
    rows = []
    for key, v in c.items():
        if not (isinstance(v, dict) and "auc" in v):
            continue
        task, tactics = key.split("/")
        since = v["since_switch"]["learning"]
        rows.append(
            [
                task,
                f"`{tactics}`",
                f"{v['auc']['static']:.2f}",
                f"{v['auc']['learning']:.2f}",
                f"{(v['auc']['learning'] - v['auc']['static']) * 100:+.0f}",
                ", ".join(f"{x:.2f}" for x in since),
            ]
        )
    head = ["task", "tactics", "static AUC", "learning AUC", "gain (points)"]
    head.append("learning by rounds since a switch")
    camps = c["campaigns"]
    return (
        f"Campaigns {min(camps)}–{max(camps)}, {c['rounds']} rounds each, the `--model fake` "
        f"policy in-process (`bench/experiments/campaign_curves.py`); a refit on a full experience "
        f"table took {c['refit_s_full_table']:.2f} s.\n\n"
        + _table(head, rows)
        + "\n\n"
        + _source(r)
    )


#: Where bench/experiments/keep_campaign.py keeps campaigns, under the rendered checkout's root.
KEPT = Path("bench") / "results" / "campaigns"
#: The kept campaigns in the order the docs show them (bench/experiments/keep_campaign.py names).
AGENT_CAMPAIGNS = (
    "hard-mixed-fake",
    "medium-mixed-fake",
    "hard-classic-fake",
    "medium-classic-fake",
    "hard-mixed-expert09",
    "hard-mixed-expert03",
)


def _kept(r: Results, name: str) -> Results:
    """A kept campaign of the checkout being rendered (`run` puts its root in `r`)."""
    path = Path(r["_root"]) / KEPT / f"{name}.json"
    if not path.exists():
        keeper = "bench/experiments/keep_campaign.py"
        raise RenderError(f"{KEPT / path.name} is missing ({keeper} keeps it)")
    return json.loads(path.read_text())


def _measured(kept: list[Results], what: str = "Measured") -> str:
    days = sorted({k["measured_at"][:16].replace("T", " ") for k in kept})
    when = days[0] if len(days) == 1 else f"{days[0]} to {days[-1][11:]}"
    return f"*{what} on {when} UTC ({kept[0]['machine']}).*"


def _auc(auc: dict[str, float], mode: str) -> str:
    return f"{auc[mode]:.3f}" if mode in auc else "—"


def _share(mode: Results, i: int) -> str:
    share = mode["share_on_trace"][i]
    return ("—" if share is None else f"{share:.3f}") + f" ({mode['pivots'][i]})"


def render_agent_campaigns(r: Results) -> str:
    """The agent's campaigns through the graph (`fakegang campaign`), kept under
    bench/results/campaigns/."""
    kept = [_kept(r, n) for n in AGENT_CAMPAIGNS]
    rows = []
    for k in kept:
        auc = k["auc"]
        rows.append(
            [
                k["task"],
                f"`{k['tactics']}`",
                f"`{k['model']}`",
                f"**{auc['learning']:.3f}**",
                _auc(auc, "static"),
                _auc(auc, "oracle"),
                ", ".join(f"{x:.2f}" for x in k["since_switch"]["learning"]),
                f"{k['pivot_share']['learning']:.3f}",
                f"{k['llm_call_share']['learning']:.3f}",
            ]
        )
    head = ["task", "tactics", "model", "`learning` AUC", "`static`", "`oracle`"]
    head += ["`learning` by rounds since a switch", "pivots / actions", "LLM calls / actions"]
    first = kept[0]
    camps = first["campaigns"]
    command = (
        f"fakegang campaign --task T --tactics G --campaigns {min(camps)}-{max(camps)} "
        f"--rounds {first['rounds']} --model M [--compare] --concurrency 2 --json --out DIR"
    )
    return (
        f"```\n{command}\n```\n\n"
        "`--compare` plays `static` and `oracle` beside `learning` (the `fake` rows); AUC is the "
        "mean win rate over every round.\n\n" + _table(head, rows) + "\n\n" + _measured(kept)
    )


def render_pivot_shift(r: Results) -> str:
    """The share of pivots on a trace the operator killed, by rounds since the regime began."""
    k = _kept(r, "pivot-shift")
    a, b = k["campaigns"]
    command = (
        f"python bench/experiments/pivot_shift.py --task {k['task']} --tactics {k['tactics']} "
        f"--trace {k['trace']} --campaigns {a}-{b} --rounds {k['rounds']}"
    )
    head = ["rounds since", f"`static`: share on {k['trace']} (pivots)", "win rate"]
    head += [f"`learning`: share on {k['trace']} (pivots)", "win rate"]
    rows = []
    s, le = k["static"], k["learning"]
    for i in range(len(s["rounds"])):
        rows.append(
            [
                str(i),
                _share(s, i),
                f"{s['win_rate'][i]:.2f}",
                _share(le, i),
                f"{le['win_rate'][i]:.2f}",
            ]
        )
    return f"```\n{command}\n```\n\n" + _table(head, rows) + "\n\n" + _measured([k])


def render_evasion_budget(_: Results) -> str:
    """The adaptive operator's prices, from fakegang_env/evasion_budget.py."""
    from fakegang_env.evasion_budget import BUDGET, COSTS, FIXED_CHANNELS

    rows = [[f"`{c}`", f"{p.cost:.2f}", p.reason] for c, p in COSTS.items()]
    rows += [[f"`{c}`", "—", "not for sale: the task's own adaptation, played at 1.0"]
             for c in FIXED_CHANNELS]  # fmt: skip
    total = sum(p.cost for p in COSTS.values())
    return (
        _table(["channel", "cost of hiding it fully", "why"], rows)
        + f"\n\nA channel at strength s costs `cost × (1 − s)`. Budget per round: **{BUDGET}** "
        f"(hiding every channel would cost {total:.1f})."
    )


def render_adaptive_calibration(r: Results) -> str:
    """bench/experiments/adaptive_calibration.py's figures, kept as adaptive-calibration, and the
    frozen `prior` agent through the graph where a campaign of it is kept (hard-adaptive-fake)."""
    k = _kept(r, "adaptive-calibration")
    rows = []
    for t in k["tasks"]:
        for name, inv in t["investigators"].items():
            rows.append(
                [
                    t["task"], f"`{name}`",
                    " ".join(f"{w:.2f}" for w in inv["win_curve"]),
                    f"**{inv['win_late']:.2f}**",
                    f"{inv['survival_curve'][0]:.2f} → {inv['survival_curve'][-1]:.2f}",
                    f"{inv['spread_first']:.2f} → {inv['spread_last']:.2f}",
                ]
            )  # fmt: skip
    head = ["task", "investigator", "win rate per round", "rounds 6-10", "survival first → last",
            "spread first → last"]  # fmt: skip
    lines = [
        f"- {t['task']}: the pivoting perfect classifier wins "
        f"**{_pct(t['perfect_pivoting_on_prior_playbooks'])}** of the playbooks the operator "
        f"reached against `prior` (target ≥ {_pct(t['targets']['perfect_at_least'])}); "
        f"generating a round takes {t['generate_ms_median']} ms CPU and deciding a move "
        f"{t['move_ms_median']} ms (medians); the most a playbook cost: "
        f"{t['investigators']['prior']['max_cost']} (budget {t['budget']})."
        for t in k["tasks"]
    ]
    speed = r.get("tactics_speed", {}).get("per_tactics", {}).get("mixed")
    if speed:  # the generator's own cost, unchanged by the operator, on a quiet machine
        lines.append(
            f"- For comparison, `make bench` (tactics_speed section, {r['date'][:10]}) "
            f"generated a hard `mixed` network in {speed['median_ms']} ms (median): the "
            "generation times above are the same generator, measured on a busier machine."
        )
    a, b = k["tasks"][0]["campaigns"]
    text = (
        f"```\npython bench/experiments/adaptive_calibration.py --tasks "
        f"{','.join(t['task'] for t in k['tasks'])} --campaigns {a}-{b} --rounds "
        f"{k['tasks'][0]['rounds']}\n```\n\n" + _table(head, rows) + "\n\n" + "\n".join(lines)
    )
    kept = [k]
    graph = Path(r["_root"]) / KEPT / "hard-adaptive-fake.json"
    if graph.exists():
        g = json.loads(graph.read_text())
        kept.append(g)
        c0, c1 = g["campaigns"][0], g["campaigns"][-1]
        late = {m: sum(c[5:10]) / len(c[5:10]) for m, c in g["curves"].items()}
        text += (
            f"\n\nThrough the graph (`fakegang campaign --task {g['task']} --tactics adaptive "
            f"--campaigns {c0}-{c1} --rounds {g['rounds']} --model {g['model']} --modes "
            f"{','.join(g['curves'])}`): "
            + "; ".join(
                f"`{m}` wins {' '.join(f'{w:.2f}' for w in c)} (rounds 6-10: **{late[m]:.2f}**, "
                f"operator survival {g['operator'][m]['survival'][0]:.2f} → "
                f"{g['operator'][m]['survival'][-1]:.2f})"
                for m, c in g["curves"].items()
            )
            + "."
        )
    return text + "\n\n" + _measured(kept)


def render_scale(r: Results) -> str:
    s = r["scale"]
    rows = []
    for run in s["runs"].values():
        target = ""
        if "target" in run:
            target = f"{run['target']:.1f}x: {'met' if run['meets_target'] else 'not met'}"
        rows.append(
            [
                run["backend"],
                f"{run['wall_s']:.1f} s",
                f"{run['speedup']:.2f}x",
                target or "—",
                "yes" if run["identical_results"] else "NO",
            ]
        )
    head = ["run", "wall (median)", "speed-up", "target", "results identical"]
    return (
        f"{s['episodes']} {s['task']} episodes with `--model fake`, each run a fresh "
        f"`fakegang eval` process (start-up included), `--concurrency {s['concurrency']}`, "
        f"median of {s['repeats']} interleaved rounds.\n\n"
        + _table(head, rows)
        + "\n\n"
        + _source(r)
    )


def render_resources(r: Results) -> str:
    x = r["resources"]
    rows = [
        ["server start to healthy", f"{x['startup_s']:.1f} s"],
        ["resident memory idle / peak", f"{x['idle_rss_mb']:.0f} MB / {x['peak_rss_mb']:.0f} MB"],
        ["CPU cores used while serving", f"{x['cpu_cores_busy']:.2f}"],
        ["bytes written to storage", f"{x['written_mb']:.3f} MB"],
        [
            f"slowest episode alone / as 1 of {x['concurrent_hard_sessions']} hard `/ws` sessions",
            f"{x['slowest_episode_s']:.2f} s / {x['slowest_concurrent_episode_s']:.2f} s",
        ],
    ]
    head = ["measured (`bench/speed/env_resources.py`)", "value"]
    return _table(head, rows) + "\n\n" + _source(r)


def render_training(r: Results) -> str:
    t = r["training"]
    rows = []
    for task, v in t["tasks"].items():
        actions = sum(v["modes"].values())
        rows.append(
            [
                task,
                f"{v['wins']}/{v['episodes']}",
                f"{v['mean_grader']:.3f}",
                f"{v['wall_s'] / 60:.1f} min",
                f"{v['llm_calls']} of {actions}",
                f"{v['mode_share']['llm']:.0%}",
            ]
        )
    lat = t["latency"]
    head = ["task", "won", "grader", "wall", "LLM asked / actions", "actions the LLM decided"]
    return (
        f"`{t['command']}` (the program `make run` runs, on unseen seeds), "
        f"{t['process_s'] / 60:.1f} min in all; local-model decision median "
        f"{lat['median_s']:.2f} s "
        f"({lat['decisions']} calls, {lat['errors']} errors).\n\n"
        + _table(head, rows)
        + "\n\n"
        + _source(r)
    )


def render_calibration(r: Results) -> str:
    c = r["calibration"]
    rows = [
        [
            b["bin"],
            str(b["n"]),
            f"{b['mean_confidence']:.3f}",
            f"{b['share_in_ring']:.3f}",
            f"{b['gap']:+.3f}",
        ]
        for b in c["bins"]
    ]
    head = ["confidence", "flags", "mean confidence", "share in the ring", "gap"]
    return (
        f"{c['flags']} FLAG proposals of the bench's learning runs ({c['episodes']} episodes).\n\n"
        + _table(head, rows)
        + "\n\n"
        + _source(r)
    )


RENDERERS: dict[str, Callable[[Results], str]] = {
    "tasks": render_tasks,
    "graph": render_graph,
    "model-defaults": render_model_defaults,
    "settings": render_settings,
    "headline": render_headline,
    "bench-table": render_bench_table,
    "quality": render_quality,
    "tactics": render_tactics,
    "campaigns": render_campaigns,
    "scale": render_scale,
    "resources": render_resources,
    "training": render_training,
    "calibration": render_calibration,
    "agent-campaigns": render_agent_campaigns,
    "pivot-shift": render_pivot_shift,
    "evasion-budget": render_evasion_budget,
    "adaptive-calibration": render_adaptive_calibration,
}


def pages(root: Path) -> list[Path]:
    """README.md and every Markdown page of the docs site."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def render_page(text: str, results: Results, cache: dict[str, str], where: str) -> str:
    """`text` with every rendered block replaced by its current rendering."""
    names = OPENING.findall(text)
    closed = [m.group("name") for m in BLOCK.finditer(text)]
    if names != closed:
        unclosed = sorted(set(names) - set(closed)) or names
        raise RenderError(f"{where}: block {unclosed[0]!r} has no closing marker")

    def replace(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in RENDERERS:
            raise RenderError(f"{where}: unknown block {name!r} (known: {', '.join(RENDERERS)})")
        if name not in cache:
            cache[name] = RENDERERS[name](results).strip() + "\n"
        return m.group("open") + cache[name] + m.group("close")

    return BLOCK.sub(replace, text)


def stale_blocks(old: str, new: str) -> list[str]:
    before = {m.group("name"): m.group("body") for m in BLOCK.finditer(old)}
    return [
        m.group("name")
        for m in BLOCK.finditer(new)
        if before.get(m.group("name")) != m.group("body")
    ]


def run(root: Path, results_path: Path, check: bool) -> list[str]:
    """Render (or, with `check`, compare) every page; returns `page: block` for each stale one."""
    results = {**json.loads(results_path.read_text()), "_root": str(root)}
    cache: dict[str, str] = {}
    stale: list[str] = []
    for page in pages(root):
        if not page.exists():
            continue
        where = str(page.relative_to(root))
        old = page.read_text()
        new = render_page(old, results, cache, where)
        if new != old:
            stale += [f"{where}: {name}" for name in stale_blocks(old, new)]
            if not check:
                page.write_text(new)
    return stale


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if any block is stale"
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
            print(f"stale rendered blocks (run `{fix}`):", file=sys.stderr)
            print("\n".join(f"  {s}" for s in stale), file=sys.stderr)
            return 1
        print("rendered blocks are current")
        return 0
    print(f"re-rendered {len(stale)} block(s)" + "".join(f"\n  {s}" for s in stale))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
