"""The trace catalogue is the one place a trace kind lives: a throwaway kind added in a test
catalogue shows up in `/tasks`, the engine's and the rule engine's pivots, the decision prompt
and the docs tables, and moves no other trace's values (each kind draws from its own stream)."""

from __future__ import annotations

import httpx
import pytest
from env_fixtures import ThreadedServer

from fakegang.tools.models.prompting import decision_system
from fakegang.tools.rules import pivots
from fakegang.tools.rules.actions import parse_step
from fakegang_env.engine import Episode
from fakegang_env.generator import generate_network
from fakegang_env.schema import PlainObservation
from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.trace_catalogue import SHIPPED_KINDS, extended_catalogue, trace_names
from fakegang_env.trace_docs import (
    generations_table_markdown,
    trace_list_markdown,
    trace_table_markdown,
)
from fakegang_env.trace_kinds import StoredValues, TraceBuild, TraceKind
from fakegang_env.traces import TRACES


def _build_device(b: TraceBuild) -> StoredValues:
    """Members share one device fingerprint with the channel's strength; others draw one of a
    few common devices (many draws: a kind that uses its stream heavily)."""
    values = {}
    for a in b.net.accounts.values():
        u, pick = b.rng.random(), b.rng.randrange(7)
        values[a.account_id] = "dev_ring" if a.is_gang and u < b.strength else f"dev_{pick}"
    return StoredValues(values)


DEVICE = TraceKind(
    name="device",
    channel="shared_proxies",
    note="the device fingerprint the account logs in from",
    prompt_note="device fingerprint",
    label="Device",
    crowd_reason="this operator bought fresh phones",
    at_full_strength="one emulator farm",
    weakened="common phone models",
    build=_build_device,
)


def _every_value(net) -> dict[str, dict[str, str]]:
    traces = net.traces
    return {t: {a: traces.value(net, t, a) for a in net.accounts} for t in traces.kinds}


@pytest.mark.parametrize(("task", "tactics"), [("easy", "classic"), ("medium", "mixed")])
def test_a_new_kind_moves_no_other_trace_value(task: str, tactics: str) -> None:
    for seed in range(3):
        shipped = _every_value(generate_network(task, seed, tactics))
        with extended_catalogue(DEVICE):
            extended = _every_value(generate_network(task, seed, tactics))
        assert set(extended) == {*shipped, "device"}
        assert len(set(extended["device"].values())) > 1
        assert {t: extended[t] for t in shipped} == shipped, (task, tactics, seed)


def test_a_new_kind_is_listed_by_tasks_and_pivoted_on_over_http() -> None:
    with (
        extended_catalogue(DEVICE),
        ThreadedServer(build_app(ServerSettings(max_ws_sessions=2))) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        doc = http.get("/tasks").json()
        assert [t["name"] for t in doc["traces"]] == [*TRACES, "device"]
        assert doc["traces"][-1] == {
            "name": "device",
            "description": DEVICE.note,
            "channel": "shared_proxies",
        }
        assert all("device" in row["traces"] for row in doc["tactics"] if row["traces"])
        obs = http.post("/reset", json={"task": "easy", "seed": 0}).json()["observation"]
        member = obs["visible_account_ids"][0]
        for action in (
            {"action_type": "inspect", "account_id": member},
            {"action_type": "pivot", "account_id": member, "trace": "device"},
        ):
            body = {"episode_id": obs["episode_id"], "action": action}
            got = http.post("/step", json=body).json()["observation"]
        assert got["pivots"][-1]["trace"] == "device" and got["pivots"][-1]["total"] > 0
    assert trace_names() == TRACES  # the block ends: the shipped catalogue again


def test_a_new_kind_reaches_the_rule_engine_the_prompt_and_the_docs() -> None:
    with extended_catalogue(DEVICE):
        ep = Episode("easy", 0)
        member = ep.network.reported_id
        obs = PlainObservation(**ep.step("inspect", member))
        assert parse_step(f"pivot {member} device") == ("pivot", member, "device")
        pinned = {**pivots.shipped_yields("easy"), "device": 9.0}
        moves = pivots.candidates(obs, {member: 0.9}, pinned)
        assert {m.trace for m in moves} == set(trace_names())
        assert pivots.shipped_yields("easy")["device"] == 0.0  # not fitted yet
        assert "device (device fingerprint)" in decision_system()
        assert "| `device` | the device fingerprint" in trace_table_markdown()
        assert generations_table_markdown().splitlines()[0].endswith("| device |")
        assert trace_list_markdown().endswith("`schedule` or `device`")
    assert "device" not in decision_system()


def test_an_episode_rejects_a_kind_its_network_was_not_built_with() -> None:
    ep = Episode("easy", 0)
    member = ep.network.reported_id
    ep.step("inspect", member)
    with extended_catalogue(DEVICE):
        out = ep.step("pivot", member, "device")
    assert "unknown trace 'device'" in out["message"]


def test_kind_names_are_unique() -> None:
    with pytest.raises(ValueError, match="duplicate"), extended_catalogue(SHIPPED_KINDS[0]):
        pass
