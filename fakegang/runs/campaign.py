"""`fakegang campaign`: play campaigns round by round and measure the learning curve.

The unit of work is `play_campaign(...)`: one campaign (task, tactics, campaign seed, rounds) in
one mode, with plain picklable arguments and a plain dict result, so a caller can ship it to a
worker process (or a Ray task) unchanged (fakegang/runs/campaign_worker.py does; the sweep over
campaigns and modes is fakegang/runs/campaign_sweep.py). Modes:
- `static`: the agent with learning off (shipped weights, nothing learned; its rounds are still
  recorded, as `eval` records its episodes, and nothing it plays reads them back);
- `prior`: the fair baseline: the learning agent's starting point (the unknown operator's weights
  and trace yields, the same pivots and reading of the report), frozen: nothing is learned;
- `learning`: the agent learning from every debrief (refit, credit α, insights);
- `oracle`: the environment's oracle policy (knows the ring), the ceiling.

`tactics=adaptive` rounds are played in order: each round's reset sends the operator token of
the previous round's debrief, and each row carries the operator's debrief (`operator`: the
playbook played, its survival, the one-line reason), known only once the round has ended.
The agent modes play through the real graph against an environment server (the embedded one
unless `env_url` is given), each campaign in its own fresh database (or a copy of `from_db`),
as a run of its own (`campaign_run_id`: `fakegang runs` and `report` list its rounds).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fakegang.graph import resources
from fakegang.graph.context import Context
from fakegang.graph.graph import compile_with_sqlite
from fakegang.runs.runner import environment, episode_config
from fakegang.tools.memory.store import utc_now
from fakegang.tools.rules.actions import parse_step
from fakegang_env.engine import Episode
from fakegang_env.operator import OperatorState, opening
from fakegang_env.policies import play_policy
from fakegang_env.tactics import ADAPTIVE, campaign_schedule, round_seed
from fakegang_env.traces import TRACES

MODES = ("static", "prior", "learning", "oracle")
#: Modes whose agent reads learned (or starting) weights rather than the shipped ones.
REFIT_MODES = ("prior", "learning")
CAMPAIGN_NAMESPACE = uuid.UUID("0b6f3c1e-7d7e-4f55-9d43-52a1c3e0a6b1")

Progress = Callable[[str], None]


def round_thread_id(task: str, tactics: str, campaign: int, k: int, mode: str, tag: str) -> str:
    return str(uuid.uuid5(CAMPAIGN_NAMESPACE, f"{tag}:{task}:{tactics}:{campaign}:{k}:{mode}"))


def campaign_run_id(tag: str, mode: str, campaign: int) -> str:
    """The run id of one campaign in one mode (`tag` names the invocation that played it)."""
    return f"campaign-{tag}-{mode}-c{campaign}"


def round_seeds(task: str, tactics: str, campaign: int, rounds: int) -> list[tuple[int, int]]:
    """(round, network seed) of rounds 0..rounds-1 (adaptive rounds' playbooks come later)."""
    if tactics == ADAPTIVE:
        return [(k, round_seed(task, campaign, k)) for k in range(rounds)]
    return [(s.round, s.seed) for s in campaign_schedule(task, campaign, rounds, tactics)]


def campaign_threads(settings: dict[str, Any]) -> list[tuple[int, str, int, str]]:
    """(episode, task, seed, thread id) of every round of a campaign run, from its settings."""
    task, tactics, campaign = settings["task"], settings["tactics"], settings["campaign"]
    mode, tag = settings["mode"], settings["tag"]
    return [
        (k + 1, task, seed, round_thread_id(task, tactics, campaign, k, mode, tag))
        for k, seed in round_seeds(task, tactics, campaign, settings["rounds"])
    ]


def round_line(mode: str, campaign: int, rounds: int, row: dict[str, Any]) -> str:
    """The progress line of one played round."""
    alpha = "" if row.get("alpha") is None else f" α={row['alpha']:.2f}"
    operator = row.get("operator")
    told = (
        f" survival={operator['survival']:.2f} operator: {operator['reason']}" if operator else ""
    )
    return (
        f"{mode:8s} campaign {campaign} round {row['round'] + 1}/{rounds} "
        f"regime {row['regime']}: {'WIN ' if row['won'] else 'LOSS'} "
        f"grader={row['grader_score']:.2f}{alpha} llm={row['llm_calls']}/{row['actions']}{told}"
    )


def operator_row(debrief: dict[str, Any]) -> dict[str, Any]:
    """An operator debrief as the campaign JSON keeps it (without the next round's token)."""
    return {k: v for k, v in debrief.items() if k != "next_token"}


def adaptive_regimes(rows: list[dict[str, Any]]) -> None:
    """Number an adaptive campaign's regimes in place: a new one whenever the playbook changed."""
    regime, before = 0, None
    for row in rows:
        played = (row.get("operator") or {}).get("playbook")
        if before is not None and played != before:
            regime += 1
        row["regime"], before = regime, played


def _oracle_round(
    task: str, campaign: int, k: int, tactics: str, operator: OperatorState | None = None
) -> tuple[dict[str, Any], OperatorState | None]:
    """One round played by the oracle; with an adaptive `operator`, also its next state."""
    if operator is not None:
        ep = Episode.for_adaptive_round(operator)
    else:
        ep = Episode.for_round(task, campaign, k, tactics)
    debrief = play_policy("oracle", ep)["operator"]
    g = ep.grader()
    row = {
        "won": bool(g["won"]),
        "grader_score": g["score"],
        "actions": ep.action_count,
        "llm_calls": 0,
        "alpha": None,
        "pivots": {},
        **({"operator": operator_row(debrief)} if debrief else {}),
    }
    return row, ep.operator_next


def play_campaign(
    task: str,
    tactics: str,
    campaign: int,
    rounds: int,
    model: str,
    mode: str,
    db_path: str | None = None,
    *,
    env_url: str | None = None,
    from_db: str | None = None,
    alpha_rule: str = "credit",
    progress: Progress | None = None,
    tag: str | None = None,
    callbacks: list[Any] | None = None,
) -> dict[str, Any]:
    """Play one campaign in one mode; returns {task, tactics, campaign, mode, model, rounds:[...]}
    with per round: round, regime, seed, won, grader_score, actions, llm_calls, alpha.

    `tag` names the invocation (the run id and thread ids derive from it, so a worker that plays
    the campaign again records the same threads); default: a fresh one. `callbacks` are LangGraph
    callbacks for every round (test hooks)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    adaptive = tactics == ADAPTIVE
    regimes = (
        {}
        if adaptive
        else {s.round: s.regime for s in campaign_schedule(task, campaign, rounds, tactics)}
    )
    seeds = round_seeds(task, tactics, campaign, rounds)
    out: dict[str, Any] = {
        "task": task,
        "tactics": tactics,
        "campaign": campaign,
        "mode": mode,
        "model": model,
        "rounds": [],
    }
    if mode == "oracle":
        operator = opening(task, campaign) if adaptive else None
        for k, _ in seeds:
            row, operator = _oracle_round(task, campaign, k, tactics, operator)
            out["rounds"].append({"round": k, "regime": regimes.get(k, 0), **row})
        if adaptive:
            adaptive_regimes(out["rounds"])
        return out
    tmp_dir = None
    if db_path is None:
        tmp_dir = tempfile.mkdtemp(prefix="fakegang-campaign-")
        db_path = str(Path(tmp_dir) / f"{mode}-{campaign}.sqlite")
    if from_db:
        shutil.copyfile(from_db, db_path)
    tag = tag or uuid.uuid4().hex[:8]  # a database reused across invocations never mixes threads
    run_id = campaign_run_id(tag, mode, campaign)
    settings = {
        "kind": "campaign", "task": task, "tactics": tactics, "campaign": campaign,
        "rounds": rounds, "mode": mode, "model": model, "tag": tag, "alpha_rule": alpha_rule,
    }  # fmt: skip
    try:
        with environment(env_url) as url:
            ctx = Context(
                env_url=url,
                db_path=db_path,
                model=model,
                run_kind="campaign",
                learn=mode == "learning",
                # static rounds are recorded too (outcome, steps); with learning off nothing
                # read during play depends on them (α and weights come from tables it never writes)
                record=True,
                # prior reads the starting weights (an empty weights table) and never writes one
                refit=mode in REFIT_MODES,
                alpha_rule=alpha_rule,
            )
            ctx.learn = mode == "learning"  # whatever $FAKEGANG_LEARN says (it fills defaults)
            memory = resources.memory(ctx)
            memory.upsert_run(
                {"run_id": run_id, "status": "running", "model": model, "started_at": utc_now(),
                 "settings": json.dumps(settings), "episodes_total": rounds}
            )  # fmt: skip
            app = compile_with_sqlite(db_path)
            if callbacks:
                app = app.with_config(callbacks=callbacks)
            status = "interrupted"
            token = None
            try:
                for k, _ in seeds:
                    row = _agent_round(app, ctx, settings, k, regimes.get(k, 0), run_id, token)
                    out["rounds"].append(row)
                    if adaptive:
                        token = row.pop("operator_token")
                        adaptive_regimes(out["rounds"])
                    if progress:
                        progress(round_line(mode, campaign, rounds, row))
                status = "finished"
            finally:
                memory.upsert_run({"run_id": run_id, "status": status})
                conn = getattr(app.checkpointer, "conn", None)
                if conn is not None:
                    conn.close()
                resources.reset_all()
    finally:
        if tmp_dir:
            shutil.rmtree(tmp_dir, ignore_errors=True)
    return out


def _agent_round(
    app,
    ctx: Context,
    settings: dict[str, Any],
    k: int,
    regime: int,
    run_id: str,
    operator_token: str | None = None,
) -> dict[str, Any]:
    """Play round k through the graph; its result row (an adaptive round's also carries the
    operator's debrief and `operator_token`, the next round's token)."""
    task, tactics, campaign = settings["task"], settings["tactics"], settings["campaign"]
    thread_id = round_thread_id(task, tactics, campaign, k, settings["mode"], settings["tag"])
    inp = {
        "task": task,
        "tactics": tactics,
        "campaign": campaign,
        "round": k,
        "run_id": run_id,
        "episode": k + 1,
        **({"operator_token": operator_token} if operator_token else {}),
    }
    config = episode_config(thread_id, task)
    app.invoke(inp, config, context=ctx, durability="exit")
    # the whole state, not invoke's output schema: action count, pinned weights
    final = app.get_state(config).values
    result, tally = final["result"], final["tally"]
    pivots: dict[str, int] = {}
    for step in resources.memory(ctx).steps(thread_id):
        kind, _, trace = parse_step(step["action"])
        if kind == "pivot" and trace:
            pivots[trace] = pivots.get(trace, 0) + 1
    row = {
        "round": k,
        "regime": regime,
        "won": bool(result["won"]),
        "grader_score": float(result["grader_score"] or 0.0),
        "actions": int(final["action_count"]),
        "llm_calls": int(tally["llm_calls"]),
        "alpha": final["alpha"],
        "weights_version": final.get("weights_version", 0),
        "pivots": pivots,
    }
    debrief = final.get("operator")
    if debrief:
        row["operator"] = operator_row(debrief)
        row["operator_token"] = debrief["next_token"]
    return row


def summarise(
    results: list[dict[str, Any]],
    *,
    task: str,
    tactics: str,
    campaigns: list[int],
    rounds: int,
    model: str,
) -> dict[str, Any]:
    """The campaign JSON: curves, grader, auc, since_switch, llm_call_share and pivot_share per
    mode, and `pivot_trace_since_switch`: per mode and trace, the share of the pivots on that
    trace by rounds since a regime switch (null where a bucket had no pivot)."""
    modes = [m for m in MODES if any(r["mode"] == m for r in results)]
    curves: dict[str, list[float]] = {}
    grader: dict[str, list[float]] = {}
    auc: dict[str, float] = {}
    since: dict[str, list[float]] = {}
    share: dict[str, float] = {}
    pivot_share: dict[str, float] = {}
    trace_since: dict[str, dict[str, list[float | None]]] = {}
    for m in modes:
        runs = [r for r in results if r["mode"] == m]
        per_round = [[r["rounds"][k] for r in runs] for k in range(rounds)]
        curves[m] = [round(sum(x["won"] for x in rs) / len(rs), 4) for rs in per_round]
        grader[m] = [round(sum(x["grader_score"] for x in rs) / len(rs), 4) for rs in per_round]
        auc[m] = round(sum(curves[m]) / rounds, 4)
        buckets: dict[int, list[bool]] = {}
        piv_buckets: dict[int, dict[str, int]] = {}
        for r in runs:
            start = 0
            for k, row in enumerate(r["rounds"]):
                if k > 0 and row["regime"] != r["rounds"][k - 1]["regime"]:
                    start = k
                buckets.setdefault(k - start, []).append(row["won"])
                into = piv_buckets.setdefault(k - start, {})
                for t, n in (row.get("pivots") or {}).items():
                    into[t] = into.get(t, 0) + n
        since[m] = [round(sum(v) / len(v), 4) for _, v in sorted(buckets.items())]
        trace_since[m] = {
            t: [
                round(b.get(t, 0) / sum(b.values()), 4) if sum(b.values()) else None
                for _, b in sorted(piv_buckets.items())
            ]
            for t in TRACES
        }
        actions = sum(x["actions"] for r in runs for x in r["rounds"])
        calls = sum(x["llm_calls"] for r in runs for x in r["rounds"])
        n_pivots = sum(sum((x.get("pivots") or {}).values()) for r in runs for x in r["rounds"])
        share[m] = round(calls / actions, 4) if actions else 0.0
        pivot_share[m] = round(n_pivots / actions, 4) if actions else 0.0
    operator = (
        {m: operator_summary(results, m, rounds) for m in modes} if tactics == ADAPTIVE else {}
    )
    return {
        "task": task,
        "tactics": tactics,
        "campaigns": campaigns,
        "rounds": rounds,
        "model": model,
        "curves": curves,
        "grader": grader,
        "auc": auc,
        "since_switch": since,
        "llm_call_share": share,
        "pivot_share": pivot_share,
        "pivot_trace_since_switch": trace_since,
        **({"operator": operator} if operator else {}),
        **learning_pays(auc),
    }


def learning_pays(auc: dict[str, float]) -> dict[str, float]:
    """`learning_minus_prior`: what learning bought over the same agent frozen at its start
    (AUC points), where both were played."""
    if "learning" in auc and "prior" in auc:
        return {"learning_minus_prior": round(auc["learning"] - auc["prior"], 4)}
    return {}


def operator_summary(results: list[dict[str, Any]], mode: str, rounds: int) -> dict[str, Any]:
    """An adaptive campaign's operator as one mode met it: mean survival per round, the channel
    its moves weakened most often per round, and every round's debrief per campaign."""
    runs = sorted((r for r in results if r["mode"] == mode), key=lambda r: r["campaign"])
    survival = [
        round(sum(r["rounds"][k]["operator"]["survival"] for r in runs) / len(runs), 4)
        for k in range(rounds)
    ]
    weakest: list[str | None] = []
    for k in range(rounds):
        moved = Counter(r["rounds"][k]["operator"]["move"] for r in runs)
        moved.pop(None, None)
        weakest.append(min(moved, key=lambda c: (-moved[c], c)) if moved else None)
    return {
        "survival": survival,
        "most_weakened": weakest,
        "campaigns": {str(r["campaign"]): [x["operator"] for x in r["rounds"]] for r in runs},
    }


def switch_rounds(task: str, tactics: str, campaigns: list[int], rounds: int) -> dict[int, float]:
    """Round -> share of campaigns whose regime switches at that round (for the plot)."""
    counts: dict[int, int] = {}
    for c in campaigns:
        sched = campaign_schedule(task, c, rounds, tactics)
        for k in range(1, rounds):
            if sched[k].regime != sched[k - 1].regime:
                counts[k] = counts.get(k, 0) + 1
    return {k: v / len(campaigns) for k, v in counts.items()}


MODE_STYLES: dict[str, tuple[str, str]] = {
    "static": ("tab:gray", "--"),
    "prior": ("tab:orange", "-."),
    "learning": ("tab:blue", "-"),
    "oracle": ("tab:green", ":"),
}


def write_outputs(summary: dict[str, Any], out_dir: str) -> tuple[Path, Path]:
    """campaign.json and campaign.png (win rate per round, switches as dashed lines; an adaptive
    campaign adds an operator strip: its survival per round against each mode, and the channel
    its moves weakened most often)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "campaign.json"
    json_path.write_text(json.dumps(summary, indent=1) + "\n")
    operator = summary.get("operator")
    if operator:
        fig, (ax, strip) = plt.subplots(
            2, 1, figsize=(8, 6.6), sharex=True, gridspec_kw={"height_ratios": [3, 1.4]}
        )
    else:
        fig, ax = plt.subplots(figsize=(8, 5))
    x = list(range(1, summary["rounds"] + 1))
    for m, curve in summary["curves"].items():  # static dashed: visible under an equal curve
        color, dash = MODE_STYLES.get(m, (None, "-"))
        ax.plot(
            x, curve, marker="o", linestyle=dash, color=color,
            label=f"{m} (AUC {summary['auc'][m]:.2f})",
        )  # fmt: skip
    ax.set_xticks(x)
    if not operator:
        switches = switch_rounds(
            summary["task"], summary["tactics"], summary["campaigns"], summary["rounds"]
        )
        for k, frac in sorted(switches.items()):
            ax.axvline(k + 0.5, color="tab:red", linestyle="--", alpha=0.2 + 0.8 * frac)
        if switches:
            ax.plot(
                [], [], color="tab:red", linestyle="--",
                label="regime switch (darker: more campaigns)",
            )  # fmt: skip
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("win rate")
    n = len(summary["campaigns"])
    gain = summary.get("learning_minus_prior")
    told = "" if gain is None else f"; learning − prior {gain:+.2f} AUC"
    ax.set_title(
        f"{summary['task']} / {summary['tactics']}: {n} campaign(s), model {summary['model']}"
        + told
    )
    ax.grid(alpha=0.3)
    if operator:
        ax.legend(loc="lower left", ncol=2, fontsize=8)
        _operator_strip(strip, operator, x)
    else:
        ax.set_xlabel("round")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4, fontsize=8)
    png_path = out / "campaign.png"
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return json_path, png_path


def _operator_strip(ax, operator: dict[str, Any], x: list[int]) -> None:
    """The operator under the curves: its survival against each mode, and (against the
    learning mode, or the first agent mode) the channel its moves weakened most often."""
    for m, seen in operator.items():
        color, dash = MODE_STYLES.get(m, (None, "-"))
        ax.plot(x, seen["survival"], linestyle=dash, color=color, marker=".", label=m)
    told = next((m for m in ("learning", "prior", "static") if m in operator), None)
    if told:
        for k, channel in enumerate(operator[told]["most_weakened"]):
            if channel:
                ax.annotate(
                    channel.replace("_", " "), (x[k], 1.02), rotation=35, fontsize=6,
                    ha="left", va="bottom", annotation_clip=False,
                )  # fmt: skip
    ax.set_ylim(0, 1.0)
    ax.set_ylabel("ring survival")
    ax.set_xlabel(f"round (labels: the channel the operator weakened most often vs {told})")
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
