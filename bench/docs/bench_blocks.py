"""Blocks rendered from `bench/results/latest.json`: what `make bench` measured last."""

from __future__ import annotations

import re

from bench.docs.kept import load_kept, measured
from bench.docs.md import Results, pct, source, table


def training_label(tr: Results) -> str:
    """What the training row measured: `make run`'s program and curriculum, and on which seeds
    when the bench shifted them (it plays unseen seeds, so the hybrid evaluation stays fair)."""
    what = f"the `make run` program, {tr['episodes']}-episode curriculum, local model"
    offset = re.search(r"--seed-offset (\d+)", tr["command"])
    if offset and offset.group(1) != "0":
        what += f", on seeds from {offset.group(1)}; `make run` itself starts at 0"
    return what


def render_headline(r: Results) -> str:
    tr, rules, scale, camp = r["training"], r["rules_agent"]["quality"], r["scale"], r["campaigns"]
    calls = sum(v["llm_calls"] for v in tr["tasks"].values())
    actions = sum(sum(v["modes"].values()) for v in tr["tasks"].values())
    wins = sum(v["wins"] for v in tr["tasks"].values())
    runs = scale["runs"]
    rows = [
        [
            f"`{tr['command']}` ({training_label(tr)})",
            f"{tr['process_s'] / 60:.1f} min, {wins}/{tr['episodes']} won, "
            f"LLM asked on {calls} of {actions} actions ({calls / actions:.1%})",
        ],
        *[
            [
                f"rules-only agent, {task} (seeds 0–49)",
                f"win {pct(q['win_rate'])}, grader {q['mean_grader']:.3f}, "
                f"{q['mean_steps']:.1f} steps",
            ]
            for task, q in rules.items()
        ],
        *[
            [
                f"campaigns in-process (rule player, no graph), {key.replace('/', ' `')}` "
                f"(campaigns {min(camp['campaigns'])}–{max(camp['campaigns'])}, "
                f"{camp['rounds']} rounds)",
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
    kept = [load_kept(r, n) for n in ("hard-mixed-fake", "hard-mixed-expert09")]
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
        table(["what", "figure"], rows)
        + "\n\n"
        + source(r)
        + "\n"
        + measured(kept, "The graph campaigns: measured")
    )


def render_bench_table(r: Results) -> str:
    from bench.suite.bench_table import table as bench_table  # the table `make bench` prints

    return "```text\n" + bench_table(r) + "\n```\n\n" + source(r)


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
                    pct(q["win_rate"]),
                    f"{q['mean_grader']:.3f}",
                    f"{q['mean_steps']:.1f}",
                    f"{q['llm_calls_per_episode']:.1f}",
                    f"{min(seeds)}–{max(seeds)}",
                ]
            )
    head = ["task", "player", "win", "grader", "steps", "LLM calls/ep", "seeds"]
    return table(head, rows) + "\n\n" + source(r)


def render_tactics(r: Results) -> str:
    t = r["tactics"]
    rows = [
        [
            x["task"],
            f"`{x['tactics']}`",
            pct(x["agent"]["win_rate"]),
            f"{x['agent']['mean_grader']:.3f}",
            pct(x["naive"]["win_rate"]),
            pct(x["oracle"]["win_rate"]),
            f"{x['oracle']['mean_grader']:.3f}",
            f"{x['f1_classic_fitted']:.3f}",
            f"{x['f1_refit']:.3f}",
            pct(x["refit_agent"]["win_rate"]),
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
        + table(head, rows)
        + "\n\n"
        + source(r)
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
        f"table took {c['refit_s_full_table']:.2f} s.\n\n" + table(head, rows) + "\n\n" + source(r)
    )


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
        f"median of {s['repeats']} interleaved rounds.\n\n" + table(head, rows) + "\n\n" + source(r)
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
    return table(head, rows) + "\n\n" + source(r)


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
        + table(head, rows)
        + "\n\n"
        + source(r)
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
        + table(head, rows)
        + "\n\n"
        + source(r)
    )
