"""An episode's case file, the way a takedown report is written: the accounts flagged, each with
how it was found, when it was inspected and flagged, the evidence and each feature's weight in
its score, and, after the debrief, whether it was a ring member; then the members missed.

Built from the episode page's own data (fakegang/view/episode.py), so the file and the page can
never disagree; served as a printable page, as Markdown and as JSON.
"""

from __future__ import annotations

from typing import Any


def _found(w: dict[str, Any]) -> str:
    if w.get("seen") is None:
        return "never seen by the agent"
    if w["seen"] < 0:
        return "a starting account (in the report the case opened with)"
    src = f" from {w['from']}" if w.get("from") else ""
    return f"revealed by action #{w['seen']} ({w['by']}){src}"


def _verdict(w: dict[str, Any]) -> str:
    if w.get("member") is None:
        return "not judged yet (the episode has not ended)"
    if w["member"]:
        return "ring member" + (" (hit)" if w.get("flagged") is not None else " (missed)")
    return "innocent (false flag)"


#: Who decided a flag, in words (the arbitration mode of the flag action).
DECIDED_BY = {
    "agree": "the rule and the LLM agreed",
    "rule_override": "the rule's choice",
    "rule_alone": "the rule's choice (the LLM was not asked)",
    "llm": "the LLM's choice",
    "fork": "a person's choice (a fork)",
}


def case_file(data: dict[str, Any]) -> dict[str, Any]:
    """The case file of one episode from `load_episode`'s data."""
    ep, case = data["episode"], data.get("case") or {}
    why = case.get("why") or {}
    entries = []
    for w in why.values():
        entries.append(
            {
                "account": w["id"],
                "flagged": w.get("flagged") is not None,
                "found": _found(w),
                "inspected_at": w.get("inspected"),
                "flagged_at": w.get("flagged"),
                "flagged_by": DECIDED_BY.get(w.get("flagged_by") or "", w.get("flagged_by")),
                "verdict": _verdict(w),
                "member": w.get("member"),
                "evidence": w.get("evidence"),
            }
        )
    result = data.get("result") or {}
    return {
        "thread_id": ep["thread_id"],
        "run_id": ep["run_id"],
        "episode": ep["episode"],
        "task": ep["task"],
        "seed": ep["seed"],
        "tactics": data.get("tactics"),
        "campaign": data.get("campaign"),
        "round": data.get("round"),
        "outcome": None if not result else ("WIN" if result.get("won") else "LOSS"),
        "grader_score": result.get("grader_score"),
        "recall": result.get("recall"),
        "precision": result.get("precision"),
        "actions": len(data.get("steps") or []),
        "weights": data.get("weights_source"),
        "flagged": [e for e in entries if e["flagged"]],
        "missed": [e for e in entries if not e["flagged"]],
        "never_seen": (case.get("debrief") or {}).get("never_seen", []),
    }


def _evidence_md(e: dict[str, Any] | None) -> list[str]:
    if not e:
        return ["- evidence: none (the agent never saw it)"]
    lines = [
        f"- evidence: {e.get('note')}"
        + (f", before action #{e['as_of']}" if e.get("as_of") is not None else "")
    ]
    for name, value, contribution in e.get("features") or []:
        lines.append(f"  - `{name}` = {value} → {contribution:+.2f} log-odds")
    return lines


def to_markdown(cf: dict[str, Any]) -> str:
    """The case file as Markdown (what `?format=md` serves)."""
    head = [
        f"# Case file: episode {cf['episode']} of {cf['run_id']}",
        "",
        f"- thread: `{cf['thread_id']}`",
        f"- task {cf['task']}, seed {cf['seed']}, tactics {cf['tactics']}"
        + (
            f", campaign {cf['campaign']} round {cf['round'] + 1}"
            if cf["campaign"] is not None
            else ""
        ),
        f"- outcome: {cf['outcome'] or 'not finished'}"
        + (f", grader {cf['grader_score']:.3f}" if cf["grader_score"] is not None else "")
        + f", {cf['actions']} actions (numbered from #0)",
        f"- scores under {cf['weights']}",
        "",
        f"## Accounts flagged ({len(cf['flagged'])})",
    ]
    body: list[str] = []
    for section, entries in (
        ("", cf["flagged"]),
        (f"## Members missed ({len(cf['missed'])})", cf["missed"]),
    ):
        if section:
            body += ["", section]
        for e in entries:
            body += ["", f"### {e['account']}: {e['verdict']}", f"- found: {e['found']}"]
            if e["inspected_at"] is not None:
                body.append(f"- inspected at action #{e['inspected_at']}")
            if e["flagged_at"] is not None:
                by = f" ({e['flagged_by']})" if e.get("flagged_by") else ""
                body.append(f"- flagged at action #{e['flagged_at']}{by}")
            body += _evidence_md(e["evidence"])
    return "\n".join(head + body) + "\n"
