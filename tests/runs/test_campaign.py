"""`fakegang campaign` through the real graph and the embedded server: JSON shape, PNG, learning
beating static on a generation built to need it, and the weights version pinned per episode."""

from __future__ import annotations

import json

import pytest

from fakegang.cli.main import main
from fakegang.report.learning import learning_section
from fakegang.tools.learning import experience, trace_yields
from fakegang.tools.memory.store import Memory
from fakegang.tools.rules import report_reader
from fakegang.tools.rules.pivots import shipped_yields
from fakegang_env.tactics import CHANNELS
from fakegang_env.traces import TRACES

KEYS = {
    "task",
    "tactics",
    "campaigns",
    "rounds",
    "model",
    "curves",
    "grader",
    "auc",
    "since_switch",
    "llm_call_share",
    "pivot_share",
    "pivot_trace_since_switch",
    "learning_minus_prior",
}


def test_campaign_learning_beats_static_on_aged_accounts(tmp_path, capsys):
    # hard + aged_accounts kills a trace (creation windows return crowds) and the creation
    # burst the shipped weights lean on: static, pivoting by the shipped yields, loses a round
    # that learning, which learned the weights and the yields from the first debrief, wins
    db = tmp_path / "c.sqlite"
    out = tmp_path / "out"
    code = main(
        [
            "campaign",
            "--task",
            "hard",
            "--tactics",
            "aged_accounts",
            "--campaigns",
            "0-0",
            "--rounds",
            "3",
            "--model",
            "fake",
            "--compare",
            "--json",
            "--db",
            str(db),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary) == KEYS
    assert summary["campaigns"] == [0] and summary["rounds"] == 3
    for key in ("curves", "grader"):
        assert set(summary[key]) == {"static", "prior", "learning", "oracle"}
        assert all(len(v) == 3 for v in summary[key].values())
    assert summary["since_switch"]["learning"] and summary["llm_call_share"]["oracle"] == 0.0
    # pivots: a share of the actions per mode (the oracle policy never pivots), and per trace
    # the share of the pivots by rounds since a switch (null where a bucket had none)
    assert set(summary["pivot_share"]) == {"static", "prior", "learning", "oracle"}
    assert summary["pivot_share"]["oracle"] == 0.0 and 0 < summary["pivot_share"]["learning"] < 1
    by_trace = summary["pivot_trace_since_switch"]["learning"]
    assert set(by_trace) == set(TRACES)
    assert all(len(v) == len(summary["since_switch"]["learning"]) for v in by_trace.values())
    first = [v[0] for v in by_trace.values()]
    assert sum(first) == pytest.approx(1.0, abs=1e-3)
    assert set(summary["pivot_trace_since_switch"]["oracle"]["ip"]) == {None}
    assert summary["curves"]["oracle"] == [1.0, 1.0, 1.0]
    assert summary["auc"]["learning"] > summary["auc"]["static"]
    gain = summary["auc"]["learning"] - summary["auc"]["prior"]
    assert summary["learning_minus_prior"] == round(gain, 4)
    # round 0 has no debrief yet: static plays the shipped (classic-ring) weights and loses,
    # learning the unknown operator's model (tools/learning/experience.py) and wins; it keeps
    # winning from its debriefs
    assert summary["curves"]["static"][0] == 0.0
    assert summary["curves"]["learning"] == [1.0, 1.0, 1.0]
    assert (out / "campaign.png").stat().st_size > 5000
    assert json.loads((out / "campaign.json").read_text()) == summary

    # each round pinned the version the previous round's debrief produced
    learning_db = tmp_path / "c-learning-c0.sqlite"
    memory = Memory(learning_db)
    versions = experience.version_history(memory, "hard")
    assert len(versions) == 3
    from fakegang.graph.graph import compile_with_sqlite

    app = compile_with_sqlite(str(learning_db))
    pinned, pinned_yields = [], []
    for v in versions:
        state = app.get_state({"configurable": {"thread_id": v["thread_id"]}}).values
        pinned.append(state["weights_version"])
        pinned_yields.append(state["trace_yields"])
    assert pinned == [experience.UNKNOWN_OPERATOR_VERSION, *(v["version"] for v in versions[:2])]
    # the trace yields too: the shipped ones first, then what each debrief left in the table
    assert pinned_yields[0] == shipped_yields("hard")
    learned = trace_yields.history(memory, "hard")
    for k in (1, 2):
        after = {
            r["trace"]: r["estimate"]
            for r in learned
            if r["thread_id"] == versions[k - 1]["thread_id"]
        }
        assert pinned_yields[k] == after
    # the creation windows returned crowds in the first round: their yield fell
    assert pinned_yields[1]["creation"] < 0.5 * pinned_yields[0]["creation"]
    app.checkpointer.conn.close()
    # each refit stored the tactics it inferred (the shift made every one refit), and the
    # report shows them
    for v in versions:
        assert set(v["tactics"]) == {"strength", "sd"}
        assert set(v["tactics"]["strength"]) == set(v["tactics"]["sd"]) == set(CHANNELS)
    rows = [
        {"thread_id": v["thread_id"], "episode": i, "task": "hard"} for i, v in enumerate(versions)
    ]
    page = learning_section(learning_db, rows, tmp_path)
    assert "tactics as inferred" in page and "creation burst" in page
    assert "Trace yields after each debrief" in page and (tmp_path / "yields.png").exists()
    last = versions[-1]["tactics"]
    shown = f"{last['strength']['creation_burst']:.2f} ± {last['sd']['creation_burst']:.2f}"
    assert shown in page
    memory.close()
    static = Memory(tmp_path / "c-static-c0.sqlite")
    assert experience.version_history(static, "hard") == []  # learning off: nothing refit
    static.close()


def test_campaign_refuses_bad_input_clearly(capsys):
    with pytest.raises(SystemExit):
        main(["campaign", "--task", "medium", "--rounds", "0"])
    assert "--rounds must be between 1 and 1000" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["campaign", "--task", "medium", "--tactics", "nope"])
    assert main(["campaign", "--task", "easy", "--model", "expert:2"]) == 2
    assert "P in [0, 1]" in capsys.readouterr().err
    assert main(["campaign", "--task", "easy", "--model", "expert:1", "--env-url", "http://x"]) == 2
    assert "embedded" in capsys.readouterr().err


def test_a_hypothesis_from_the_report_through_the_graph(tmp_path, monkeypatch):
    """Hard `mixed` campaign 133, round 0, `prior`, without the report reader: nothing reaches
    the flag threshold, the rule's hypothesis is played, recorded in the steps and held; the
    round is won (the in-process player's twin is tests/agent/test_rules.py)."""
    monkeypatch.setattr(report_reader, "posterior", lambda *_: None)
    db = tmp_path / "c.sqlite"
    argv = ["campaign", "--task", "hard", "--tactics", "mixed", "--campaigns", "133-133",
            "--rounds", "1", "--model", "fake", "--modes", "prior", "--no-progress",
            "--merge-into", str(db), "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 0
    memory = Memory(db)
    steps = list(memory.db.query("select idx, action, rule_reason from steps order by idx"))
    [won] = [r["won"] for r in memory.db.query("select won from episodes")]
    memory.close()
    hypotheses = [s for s in steps if s["rule_reason"].startswith("hypothesis from the report")]
    assert [s["action"] for s in hypotheses] == ["flag u_2e850d"]
    seed_at = hypotheses[0]["idx"]
    assert not any(s["action"] == "unflag u_2e850d" for s in steps if s["idx"] > seed_at)
    assert won == 1
