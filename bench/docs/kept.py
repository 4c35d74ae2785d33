"""Blocks rendered from the kept campaigns under bench/results/campaigns/ (JSON that
bench/experiments/keep_campaign.py stamped with when and where it ran)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from bench.docs.md import RenderError, Results, pct, table

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
    "hard-adaptive-fake",
    "hard-adaptive-expert09",
    "hard-adaptive-expert03",
)


def load_kept(r: Results, name: str) -> Results:
    """A kept campaign of the checkout being rendered (`run` puts its root in `r`)."""
    path = Path(r["_root"]) / KEPT / f"{name}.json"
    if not path.exists():
        keeper = "bench/experiments/keep_campaign.py"
        raise RenderError(f"{KEPT / path.name} is missing ({keeper} keeps it)")
    return json.loads(path.read_text())


def measured(kept: list[Results], what: str = "Measured") -> str:
    days = sorted({k["measured_at"][:16].replace("T", " ") for k in kept})
    if len(days) == 1:
        when = days[0]
    else:  # the end's date only when the span crosses a day
        end = days[-1][11:] if days[-1][:10] == days[0][:10] else days[-1]
        when = f"{days[0]} to {end}"
    commits = sorted({k["commit"] for k in kept if k.get("commit")})
    code = f", code at {', '.join(commits)}" if commits else ""
    return f"*{what} on {when} UTC ({kept[0]['machine']}{code}).*"


def _auc(auc: dict[str, float], mode: str) -> str:
    return f"{auc[mode]:.3f}" if mode in auc else "—"


def _gain(auc: dict[str, float]) -> str:
    """learning − prior, where the campaign played both (the fair frozen baseline)."""
    return f"{auc['learning'] - auc['prior']:+.3f}" if "prior" in auc else "—"


def _share(mode: Results, i: int) -> str:
    share = mode["share_on_trace"][i]
    return ("—" if share is None else f"{share:.3f}") + f" ({mode['pivots'][i]})"


def render_agent_campaigns(r: Results) -> str:
    """The agent's campaigns through the graph (`fakegang campaign`), kept under
    bench/results/campaigns/."""
    kept = [load_kept(r, n) for n in AGENT_CAMPAIGNS]
    rows = []
    for k in kept:
        auc = k["auc"]
        rows.append(
            [
                k["task"],
                f"`{k['tactics']}`",
                f"`{k['model']}`",
                f"**{auc['learning']:.3f}**",
                _auc(auc, "prior"),
                _gain(auc),
                _auc(auc, "static"),
                _auc(auc, "oracle"),
                ", ".join(f"{x:.2f}" for x in k["since_switch"]["learning"]),
                f"{k['pivot_share']['learning']:.3f}",
                f"{k['llm_call_share']['learning']:.3f}",
            ]
        )
    head = ["task", "tactics", "model", "`learning` AUC", "`prior`", "learning − prior"]
    head += ["`static`", "`oracle`"]
    head += ["`learning` by rounds since a switch", "pivots / actions", "LLM calls / actions"]
    first = kept[0]
    camps = first["campaigns"]
    command = (
        f"fakegang campaign --task T --tactics G --campaigns {min(camps)}-{max(camps)} "
        f"--rounds {first['rounds']} --model M [--compare] --concurrency 2 --json --out DIR"
    )
    return (
        f"```\n{command}\n```\n\n"
        "`--compare` plays `static`, `prior` (the learning agent's start, frozen) and `oracle` "
        "beside `learning` (the `fake` rows); AUC is the mean win rate over every round.\n\n"
        + table(head, rows)
        + "\n\n"
        + measured(kept)
    )


def render_pivot_shift(r: Results) -> str:
    """The share of pivots on a trace the operator killed, by rounds since the regime began."""
    k = load_kept(r, "pivot-shift")
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
    return f"```\n{command}\n```\n\n" + table(head, rows) + "\n\n" + measured([k])


def render_adaptive_calibration(r: Results) -> str:
    """bench/experiments/adaptive_calibration.py's figures, kept as adaptive-calibration, and the
    frozen `prior` agent through the graph where a campaign of it is kept (hard-adaptive-fake)."""
    k = load_kept(r, "adaptive-calibration")
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
        f"- {t['task']}: `prior` wins **{pct(t['investigators']['prior']['win_late'])}** of "
        f"rounds 6-10, target ≤ {pct(t['targets']['prior_late_at_most'])}: "
        f"{'met' if t['targets']['prior_late_met'] else '**not met**'}; "
        f"the pivoting perfect classifier wins "
        f"**{pct(t['perfect_pivoting_on_prior_playbooks'])}** of the playbooks the operator "
        f"reached against `prior` (target ≥ {pct(t['targets']['perfect_at_least'])}); "
        f"generating a round takes {t['generate_ms_median']} ms CPU and deciding a move "
        f"{t['move_ms_median']} ms (medians); the most a playbook cost: "
        f"{t['investigators']['prior']['max_cost']} (budget {t['budget']})."
        for t in k["tasks"]
    ]
    speed = r.get("tactics_speed", {}).get("per_tactics", {}).get("mixed")
    if speed:  # the generator's own cost, unchanged by the operator, on a quiet machine
        lines.append(
            f"- For comparison, `make bench` (tactics_speed section, {r['date'][:10]}) "
            f"generated a hard `mixed` network in {speed['median_ms']} ms (median), with the "
            "same generator."
        )
    a, b = k["tasks"][0]["campaigns"]
    text = (
        f"```\npython bench/experiments/adaptive_calibration.py --tasks "
        f"{','.join(t['task'] for t in k['tasks'])} --campaigns {a}-{b} --rounds "
        f"{k['tasks'][0]['rounds']}\n```\n\n" + table(head, rows) + "\n\n" + "\n".join(lines)
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
    return text + "\n\n" + measured(kept)


def render_figure_caption(name: str) -> Callable[[Results], str]:
    """The caption under a campaign picture (bench/docs/figures.py draws it from the same kept
    campaign), with the in-process `make bench` figure for the same setting beside it when
    there is one: the two are different measurements and the caption says how."""

    def render(r: Results) -> str:
        k = load_kept(r, name)
        camps = k["campaigns"]
        aucs = ", ".join(f"`{m}` {k['auc'][m]:.3f}" for m in k["curves"])
        text = (
            f"*{len(camps)} {k['task']} campaigns ({min(camps)}–{max(camps)}) of a "
            f"`{k['tactics']}` operator, {k['rounds']} rounds each, played through the graph "
            f"with `--model {k['model']}`: win-rate AUC {aucs}. Dashed red lines: hidden "
            "switches of tactics (darker where more campaigns switch). Drawn by "
            f"`bench/docs/render_docs.py` from the kept `bench/results/campaigns/{name}.json`.*"
        )
        bench = r.get("campaigns", {})
        inproc = bench.get(f"{k['task']}/{k['tactics']}")
        if isinstance(inproc, dict) and "auc" in inproc:
            b = bench["campaigns"]
            text += (
                f"\n*Not the same measurement as `make bench`'s in-process row for "
                f"{k['task']} `{k['tactics']}` (learning AUC {inproc['auc']['learning']:.2f}): "
                f"that one plays only campaigns {min(b)}–{max(b)}, with the rule player "
                "in-process (bench/experiments/campaign_curves.py), not the graph; "
                f"{len(camps)} campaigns through the graph are the figure to quote.*"
            )
        return text + "\n\n" + measured([k])

    return render
