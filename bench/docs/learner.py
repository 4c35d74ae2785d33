"""The learner of the current operator against the same agent frozen: the kept in-process
campaigns bench/experiments/campaign_curves.py wrote as bench/results/campaigns/learner-*.json."""

from __future__ import annotations

from bench.docs.kept import load_kept, measured
from bench.docs.md import Results, table

#: (kept name, what the issue asks of learning there) in the order the table shows them.
SETTINGS = (
    ("learner-hard-adaptive", "≥ 0.75 and ≥ prior + 0.25"),
    ("learner-hard-mixed", "≥ 0.85 and ≥ prior + 0.08"),
    ("learner-hard-diversified", "≥ 0.85"),
    ("learner-medium-mixed", "≥ 0.88"),
    ("learner-hard-classic", "≥ 0.98"),
    ("learner-medium-classic", "≥ 0.98"),
)


def _auc(k: Results, mode: str) -> str:
    return f"{k['auc'][mode]:.3f}" if mode in k["auc"] else "—"


def render_learner_campaigns(r: Results) -> str:
    """Win-rate AUC per mode, learning − prior, and the late rounds of the adaptive operator."""
    kept = [load_kept(r, name) for name, _ in SETTINGS]
    rows = []
    for k, (_, target) in zip(kept, SETTINGS, strict=True):
        gain = k["auc"]["learning"] - k["auc"]["prior"]
        late = k["curves"]["learning"][5:10]
        rows.append(
            [
                f"{k['task']} `{k['tactics']}`", _auc(k, "static"), _auc(k, "prior"),
                f"**{_auc(k, 'learning')}**", f"{gain:+.3f}",
                f"{sum(late) / len(late):.2f}" if late else "—", target,
            ]
        )  # fmt: skip
    head = ["campaigns 0–19 × 10 rounds", "static", "prior (frozen)", "learning",
            "learning − prior", "learning, rounds 6–10", "target (issue 38)"]  # fmt: skip
    first = kept[0]
    cmd = first["command"].replace(f"--tactics {first['tactics']}", "--tactics <tactics>")
    return (
        "In-process (the rule engine with the pinned weights, learner and yields, as the graph "
        "plays `--model fake`; no LLM, so no call shares):\n\n"
        f"```\n{cmd}\n```\n\n" + table(head, rows) + "\n\n" + measured(kept)
    )


def render_make_run(r: Results) -> str:
    """`make run`'s hard phase (train.py on its defaults, the local model) beside `prior` on the
    same adaptive campaign, kept by bench/experiments/training_run.py --keep as make-run.json."""
    k = load_kept(r, "make-run")
    same, hard = k["hard_prior_same_rounds"], k["tasks"]["hard"]
    wins = " · ".join(f"{t} {v['wins']}/{v['episodes']}" for t, v in k["tasks"].items())
    rows = [
        ["`make run` (learning, local model)", f"**{hard['wins']}/{hard['episodes']}**"],
        ["`prior`: the same agent frozen (rules only)", f"{same['prior_wins']}/{same['rounds']}"],
        ["rules-only learning (reference)", f"{same['learning_wins']}/{same['rounds']}"],
    ]
    return (
        f"`python train.py` (what `make run` runs: {k['episodes']} episodes, {wins}; "
        f"{k['wall_s'] / 60:.1f} min from the first episode to the last): its hard phase is "
        f"{same['rounds']} rounds of adaptive campaign {same['campaign']}. Beside it, on the same "
        "campaign and rounds (`python bench/experiments/training_run.py --train --keep ...`):\n\n"
        + table(["hard phase, against the adaptive operator", "rounds won"], rows)
        + "\n\n"
        + measured([k])
    )
