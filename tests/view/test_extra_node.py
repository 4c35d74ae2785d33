"""The node recipe (docs/how-to/extend-node.md) end to end: a throwaway node added to a test graph
built from the node specs shows in replay and in the viewer's episode API, with the generic
panel, without any consumer knowing its name."""

from __future__ import annotations

import io
import re
import uuid

from starlette.testclient import TestClient

from fakegang.graph.context import Context
from fakegang.graph.graph import build, recursion_limit, sqlite_checkpointer
from fakegang.graph.nodes import NODES, NodeSpec
from fakegang.graph.state import EpisodeState
from fakegang.runs.replay import replay
from fakegang.view.app import create_app


class AuditedState(EpisodeState, total=False):
    audit_note: str  # the throwaway node's output


def audit(state: AuditedState) -> dict:
    return {"audit_note": f"checked {state['decision']['action']}"}


AUDIT = NodeSpec(name="audit", function=audit, writes=("audit_note",))


def _with_audit() -> tuple[NodeSpec, ...]:
    """The shipped nodes with `audit` between arbitrate and step_env."""
    at = [s.name for s in NODES].index("step_env")
    return (*NODES[:at], AUDIT, *NODES[at:])


def test_a_node_without_a_renderer_shows_in_replay_and_in_the_viewer(env_url, tmp_path) -> None:
    db = tmp_path / "extra.sqlite"
    graph = build(_with_audit(), state=AuditedState)
    app = graph.compile(checkpointer=sqlite_checkpointer(db))
    thread_id = str(uuid.uuid4())
    cfg = {"configurable": {"thread_id": thread_id}, "recursion_limit": recursion_limit(30)}
    ctx = Context(env_url=env_url, db_path=str(db), model="fake")
    app.invoke({"task": "easy", "seed": 0, "run_id": "t", "episode": 1}, cfg, context=ctx,
               durability="sync")  # fmt: skip
    app.checkpointer.conn.close()

    out = io.StringIO()
    played = replay(db, thread_id, out=out, graph=graph)
    text = out.getvalue()
    audits = re.findall(r"^  audit +audit_note=\"checked (.+)\"$", text, re.M)
    decided = re.findall(r"^  arbitrate +\S+ → (.+) \(α", text, re.M)
    assert played > 0 and audits == decided and len(audits) == played
    assert text.count("  start ") == 1  # the episode start, its own entry before action #0

    data = TestClient(create_app(db)).get(f"/api/episode/{thread_id}").json()
    steps = data["steps"]
    assert len(steps) == played
    assert [s["nodes"]["audit"] for s in steps] == [{"audit_note": f"checked {a}"} for a in audits]
    assert list(steps[1]["nodes"]) == ["observe", "rule_check", "llm_decide", "arbitrate",
                                       "audit", "step_env"]  # fmt: skip
    panels = {p["name"]: p for p in data["panels"]}
    assert panels["audit"]["renderer"] == "generic" and panels["audit"]["writes"] == ["audit_note"]
    assert panels["start"]["renderer"] == "start" and "start" in steps[0]["nodes"]
    assert [p["name"] for p in data["panels"]][-3:] == ["arbitrate", "audit", "step_env"]
