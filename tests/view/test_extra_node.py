"""The node recipe (docs/how-to/extend-node.md) end to end: a throwaway node added to a test graph
built from the node specs shows in replay and in the viewer's episode API, with the generic
panel, without any consumer knowing its name."""

from __future__ import annotations

import io
import re

from extra_node import play_audited
from starlette.testclient import TestClient

from fakegang.runs.replay import replay
from fakegang.view.app import create_app


def test_a_node_without_a_renderer_shows_in_replay_and_in_the_viewer(env_url, tmp_path) -> None:
    db = tmp_path / "extra.sqlite"
    graph, thread_id = play_audited(db, env_url)

    out = io.StringIO()
    played = replay(db, thread_id, out=out, graph=graph)
    text = out.getvalue()
    audits = re.findall(r"^  audit +audit_note=\"checked (.+)\"$", text, re.M)
    decided = re.findall(r"^  arbitrate +\S+ → (.+) \(α", text, re.M)
    assert played > 0 and audits == decided and len(audits) == played
    assert len(re.findall(r"^  start +task easy seed 0: ", text, re.M)) == 1  # its own entry

    data = TestClient(create_app(db)).get(f"/api/episode/{thread_id}").json()
    steps = data["steps"]
    assert len(steps) == played
    assert [s["nodes"]["audit"] for s in steps] == [{"audit_note": f"checked {a}"} for a in audits]
    assert list(steps[0]["nodes"]) == ["start", "observe", "rule_check", "llm_decide",
                                       "arbitrate", "audit", "step_env"]  # fmt: skip
    assert "start" not in steps[1]["nodes"]
    panels = {p["name"]: p for p in data["panels"]}
    assert list(panels) == list(steps[0]["nodes"])  # drawn in the order the nodes ran
    assert panels["audit"]["renderer"] == "generic" and panels["audit"]["writes"] == ["audit_note"]
    assert panels["start"]["renderer"] == "start" and panels["arbitrate"]["renderer"] == "arbitrate"
