"""The text table `bench/suite/run_all.py` prints and stores (results JSON in, lines out).

Split from run_all.py so that the measuring and the presenting each stay one readable module.
"""

from __future__ import annotations

from bench.experiments import tactics_calibration, training_run
from bench.speed import busy_cpu, env_load, env_resources, scale_out
from bench.speed.timing import aligned
from fakegang_env.tasks import TASK_NAMES as TASKS


def _fmt_quality(q: dict | None) -> str:
    if not q:
        return "n/a"
    if "error" in q:
        return f"error: {q['error']}"
    if not q.get("episodes"):
        return f"no episode played (skipped {q.get('skipped', 0)})"
    seeds = q["seeds"]
    text = (
        f"win {q['win_rate']:6.1%}  grader {q['mean_grader']:.3f}  steps {q['mean_steps']:5.1f}"
        f"  LLM calls/ep {q['llm_calls_per_episode']:5.1f}  (n={q['episodes']}, "
        f"seeds {min(seeds)}-{max(seeds)})"
    )
    modes = q.get("modes") or {}
    if q["llm_calls_per_episode"] and sum(modes.values()):
        total = sum(modes.values())
        text += "  modes " + "/".join(f"{modes[m] / total:.0%}" for m in modes) + " agree/rule/llm"
    if q.get("errors") or q.get("skipped"):
        text += f" errors {q.get('errors', 0)} skipped {q.get('skipped', 0)}"
    return text


def table(r: dict) -> str:
    rows: list[tuple[str, str]] = []

    def err(part: dict) -> bool:
        if "error" in part:
            rows.append(("  error", part["error"]))
            return True
        return False

    env = r.get("env", {})
    rows.append(("ENVIRONMENT (hard)", ""))
    if not err(env):
        rows += [
            ("  network generation, median", f"{env['generation_ms_median']:.0f} ms"),
            ("  steps/s in-process", f"{env['in_process_steps_per_s']}"),
            (
                "  pivot step in-process, median / max",
                f"{env['pivot_ms_median']:.2f} / {env['pivot_ms_max']:.2f} ms"
                if "pivot_ms_median" in env
                else "not in this run (recorded before pivots)",
            ),
            ("  steps/s HTTP (keep-alive, loopback)", f"{env['http_steps_per_s']}"),
            ("  steps/s WebSocket", f"{env['ws_steps_per_s']}"),
            (
                "  observation JSON at reset / last step",
                f"{env['hard_obs_bytes_reset'] / 1024:.1f} KiB / "
                f"{env['hard_obs_bytes_last'] / 1024:.1f} KiB",
            ),
        ]
    load = r.get("load", {})
    rows.append((f"LOAD ({load.get('episodes')} hard episodes at once over HTTP, one server)", ""))
    if not err(load):
        rows += env_load.table_rows(load)
    res = r.get("resources", {})
    rows.append(("SERVER RESOURCES (openenv.yaml's validation.resources; own process)", ""))
    if not err(res):
        rows += env_resources.table_rows(res)
    g = r.get("graph", {})
    rows.append((f"GRAPH (hard, --model fake, SQLite checkpointer, {g.get('episodes')} ep)", ""))
    if not err(g):
        rows += [
            (
                "  overhead per action (nodes + checkpoints)",
                f"{g['overhead_ms_per_action']:.1f} ms  ({g['actions_per_episode']:.0f} "
                f"actions/ep; {g['overhead_ms_per_budget_step']:.1f} ms per budget step; "
                f"env calls = {g['env_share_of_wall']:.0%} of wall)",
            ),
            (
                "  checkpoint bytes per hard episode",
                f"{g['checkpoint_bytes_per_episode'] / 1e6:.2f} MB  (database growth "
                f"{g['db_growth_bytes_per_episode'] / 1e6:.2f} MB incl. memory tables)",
            ),
        ]
    llm = r.get("llm", {})
    rows.append(("LOCAL MODEL LATENCY per decision (hard inspect-step prompts)", ""))
    if "skipped" in llm:
        rows.append(("  local model", f"skipped: {llm['skipped']}"))
    elif not err(llm):
        rows.append(
            (
                "  median, prefix reused",
                f"{llm['median_s_prefix_reused']:.2f} s  ({llm['decisions_prefix_reused']} "
                f"calls, {llm['reused_tokens_median']}/{llm['prompt_tokens_median']} prompt "
                f"tokens reused, {llm.get('new_tokens_median', '?')} evaluated)",
            )
        )
        if "median_s_cold" in llm:
            rows.append(
                (
                    "  median, cold prompt",
                    f"{llm['median_s_cold']:.2f} s  ({llm['decisions_cold']})",
                )
            )
    tr = r.get("training", {})
    rows.append(("TRAINING RUN (the main job: `make run` = python train.py, local model)", ""))
    if "skipped" in tr:
        rows.append(("  training", f"skipped: {tr['skipped']}"))
    elif tr and not err(tr):
        rows += training_run.table_rows(tr)
    pol = r.get("policies", {})
    rules = r.get("rules_agent", {})
    hyb = r.get("hybrid", {})
    rows.append(("DETECTION QUALITY per task", ""))
    for task in TASKS:
        for policy in ("random", "naive"):
            pq = pol if "error" in pol else pol.get(task, {}).get(policy)
            rows.append((f"  {task}: {policy}", _fmt_quality(pq)))
        rq = rules.get("quality", {}).get(task) if "error" not in rules else rules
        rows.append((f"  {task}: rules-only agent", _fmt_quality(rq)))
        if "skipped" in hyb:
            rows.append((f"  {task}: hybrid (local model)", f"skipped: {hyb['skipped']}"))
        else:
            hq = hyb.get("quality", {}).get(task) if "error" not in hyb else hyb
            rows.append((f"  {task}: hybrid (local model)", _fmt_quality(hq)))
    if "memory" in hyb:
        rows.append(("  hybrid memory", hyb["memory"]))
    if "quality" in hyb:
        alphas = ", ".join(f"{t} {q.get('alpha')}" for t, q in hyb["quality"].items())
        rows.append(
            (
                "  hybrid evaluation",
                f"α {alphas}; {hyb['eval_s']:.0f} s (budget {hyb['budget_min']:g} min, "
                "episodes not started within it are skipped)",
            )
        )
    ts = r.get("tactics_speed", {})
    rows.append(("GENERATIONS", ""))
    if not err(ts):
        rows.append(
            (
                "  hard generation, worst over playbooks",
                f"{ts['worst_ms']:.0f} ms (target < {ts['target_ms']:.0f} ms); playbook pass "
                f"median {max(v['pass_median_ms'] for v in ts['per_tactics'].values()):.1f} ms",
            )
        )
    tac = r.get("tactics", {})
    if not err(tac):
        rows += [("  " + line, "") for line in tactics_calibration.table(tac).splitlines()]
    scale = r.get("scale", {})
    if "runs" in scale:
        rows += scale_out.table_rows(scale)
    else:
        rows.append(("SCALE-OUT", scale.get("error", "not run")))
    cal = r.get("calibration", {})
    rows.append((f"RULE FLAG CALIBRATION ({cal.get('flags', 0)} flag proposals)", ""))
    if not err(cal):
        for b in cal["bins"]:
            rows.append(
                (
                    f"  confidence {b['bin']}",
                    f"n={b['n']:4d}  mean conf {b['mean_confidence']:.3f}  in ring "
                    f"{b['share_in_ring']:.3f}  gap {b['gap']:+.3f} "
                    f"{'ok' if b['within_0_15'] else 'OUT of ±0.15'}",
                )
            )
    head = (
        f"fakegang bench — {r['date']} — `{r['command']}` — {r['machine']}"
        f"{' — QUICK (smoke settings)' if r['quick'] else ''}"
    )
    lines = [head, "-" * min(120, len(head))]
    lines += aligned(rows)  # headers and whole-line rows (the tactics table) set no width
    if r.get("busy_cpu") and "skipped" not in r["busy_cpu"]:  # its own table (busy_cpu.py)
        lines.append(busy_cpu.table(r["busy_cpu"]))
    lines.append(f"total {r['total_s']:.0f} s; sections: {r.get('section_s')}")
    return "\n".join(lines)
