"""The investigator's `pivot` action: legality, the search page, its order, determinism, evasion
rotating traces, what the generations do to the traces, and the pivot over HTTP and `/ws`."""

from __future__ import annotations

import hashlib
import statistics

import httpx
import pytest
from env_fixtures import ThreadedServer

from fakegang_env.engine import Episode
from fakegang_env.generator import generate_network, network_to_dict
from fakegang_env.policies import run_policy
from fakegang_env.schema import STEP_COST, STEP_REWARD, ActionType
from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.server.catalog import tasks_catalog
from fakegang_env.tactics import GENERATIONS, resolve_playbook
from fakegang_env.traces import PAGE_SIZE, TRACES, build_traces, trace_strengths
from fakegang_env.validation.wire import WsSession

NAMED = [g for g in GENERATIONS if g != "classic"]


def _inspected_member(ep: Episode) -> str:
    member = ep.network.reported_id
    ep.step("inspect", member)
    return member


def every_value(net, traces) -> dict[str, dict[str, str]]:
    """Every account's value of every trace kind of `traces`."""
    return {t: {a: traces.value(net, t, a) for a in net.accounts} for t in traces.kinds}


def _sharing(ep: Episode, trace: str, account_id: str) -> set[str]:
    """Every other account with the same value, from the values alone (not `matches`)."""
    net, traces = ep.network, ep.network.traces
    target = traces.value(net, trace, account_id)
    return {a for a in net.accounts if a != account_id and traces.value(net, trace, a) == target}


# -- legality -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("account", "trace", "needle"),
    [
        ("uninspected", "ip", "has not been inspected"),
        ("member", "fingerprint", "unknown trace 'fingerprint' (valid traces: ip, photo, bio"),
        ("member", None, "no trace given"),
        ("member", "", "no trace given"),
        ("invisible", "ip", "is not visible"),
        (None, "ip", "no account_id given"),
    ],
)
def test_an_illegal_pivot_changes_nothing_and_says_why(account, trace, needle):
    ep = Episode("medium", 3)
    member = _inspected_member(ep)
    uninspected = next(v for v in ep.observation()["visible_account_ids"] if v != member)
    target = {"member": member, "uninspected": uninspected, "invisible": "u_000000"}.get(account)
    before = ep.observation()
    obs = ep.step("pivot", target, trace)
    assert needle in obs["last_action_error"] and obs["message"] == obs["last_action_error"]
    assert obs["reward"] == 0.0
    keep = ("message", "last_action_error", "reward")
    assert {k: v for k, v in obs.items() if k not in keep} == {
        k: v for k, v in before.items() if k not in keep
    }


def test_only_pivot_takes_a_trace_and_a_pivot_on_the_last_step_ends_the_episode():
    ep = Episode("easy", 1)
    member = _inspected_member(ep)
    obs = ep.step("inspect", member, "ip")
    assert "only pivot takes a trace" in obs["last_action_error"] and obs["action_count"] == 1
    while ep.steps_remaining > STEP_COST[ActionType.PIVOT]:
        ep.step("inspect", member)
    obs = ep.step("pivot", member, "ip")  # like an inspect on the last step: a forced submit
    assert obs["last_action_error"] is None and obs["done"] and obs["grader_score"] is not None


def test_a_pivot_on_a_finished_episode_is_illegal():
    ep = Episode("easy", 2)
    member = _inspected_member(ep)
    ep.step("submit", None)
    obs = ep.step("pivot", member, "ip")
    assert obs["last_action_error"].startswith("Episode is already over")


# -- the search page ----------------------------------------------------------------------------
@pytest.mark.parametrize("tactics", ["classic", "residential_proxies", "diversified", "mixed"])
def test_a_pivot_returns_a_page_of_the_accounts_sharing_the_value_and_the_total(tactics):
    for seed in range(4):
        ep = Episode("hard", seed, tactics=tactics)
        member = _inspected_member(ep)
        for trace in TRACES:
            before = ep.observation()
            sharing = _sharing(ep, trace, member)
            obs = ep.step("pivot", member, trace)
            assert obs["last_action_error"] is None
            result = obs["pivots"][-1]
            assert result["account_id"] == member and result["trace"] == trace
            assert result["total"] == len(sharing)
            assert len(result["account_ids"]) == min(PAGE_SIZE, len(sharing))
            assert set(result["account_ids"]) <= sharing
            assert set(result["account_ids"]) <= set(obs["visible_account_ids"])
            assert result["at_step"] == before["step_count"]
            assert obs["step_count"] == before["step_count"] + STEP_COST[ActionType.PIVOT]
            if not ep.done:
                assert obs["reward"] == STEP_REWARD[ActionType.PIVOT] == -0.01
            assert obs["inspected_ids"] == before["inspected_ids"]  # ids, not profiles
            new = len(set(obs["visible_account_ids"]) - set(before["visible_account_ids"]))
            assert f"{len(sharing)} other accounts share it" in obs["message"]
            assert f"({new} newly visible)" in obs["message"]
            if ep.done:
                break


def test_the_ip_trace_is_the_ip_block_and_creation_the_age_window():
    net = generate_network("hard", 5)
    traces = net.traces
    by_ip: dict[str, set[str]] = {}
    for a in net.accounts.values():
        by_ip.setdefault(a.ip_cluster_id, set()).add(traces.value(net, "ip", a.account_id))
        lo, hi = (
            int(x)
            for x in traces.value(net, "creation", a.account_id)
            .removeprefix("created_")
            .removesuffix("_days_ago")
            .split("-")
        )
        assert lo <= a.account_age_days <= hi and lo == max(0, hi - 13)  # 14 days (from 0)
    assert all(len(blocks) == 1 for blocks in by_ip.values())  # one IP, one block
    # the classic ring's proxy pool is one hosting block: one ip pivot reaches every member
    member = net.gang_ids[0]
    block = traces.value(net, "ip", member)
    assert all(traces.value(net, "ip", g) == block for g in net.gang_ids)


def test_a_high_photo_reuse_score_is_a_photo_others_share():
    for seed in range(5):
        net = generate_network("medium", seed)
        values = {a: net.traces.value(net, "photo", a) for a in net.accounts}
        counts: dict[str, int] = {}
        for v in values.values():
            counts[v] = counts.get(v, 0) + 1
        for a in net.accounts.values():
            if a.photo_reuse_score > 0.3:
                assert counts[values[a.account_id]] > 1, (seed, a.role)


def test_the_order_of_a_page_depends_only_on_the_episode_and_the_ids():
    ep = Episode("hard", 9)
    member = _inspected_member(ep)
    salt = f"hard:{9}"
    for trace in TRACES:
        hits = ep.network.traces.matches(ep.network, trace, member)
        key = [hashlib.sha256(f"{salt}:order:{a}".encode()).hexdigest()[:16] for a in hits]
        assert key == sorted(key)


def test_members_sit_anywhere_on_a_page():
    """Pooled over seeds, members' mean relative rank on mixed pages is the middle."""
    ranks: list[float] = []
    for seed in range(30):
        ep = Episode("hard", seed, tactics="mixed")
        member = _inspected_member(ep)
        ring = set(ep.network.gang_ids)
        for trace in TRACES:
            page = ep.network.traces.matches(ep.network, trace, member)[:PAGE_SIZE]
            if len(page) >= 4 and 0 < sum(a in ring for a in page) < len(page):
                ranks += [i / (len(page) - 1) for i, a in enumerate(page) if a in ring]
    assert len(ranks) > 100
    assert 0.4 <= statistics.mean(ranks) <= 0.6


def test_pivots_are_deterministic():
    def play() -> list[dict]:
        ep = Episode("hard", 4, tactics="crafted_content")
        member = _inspected_member(ep)
        out = [ep.step("pivot", member, t) for t in TRACES]
        out.append(ep.step("submit", None))
        return out

    assert play() == play()


# -- evasion ------------------------------------------------------------------------------------
def test_evasion_rotates_the_schedule_and_ip_traces():
    ep = Episode("hard", 3)  # a seed with an innocent on the ring's scheduler preset
    net, member = ep.network, _inspected_member(ep)
    ring = net.gang_ids
    before = {t: {g: net.traces.value(net, t, g) for g in ring} for t in ("schedule", "ip")}
    first = ep.step("pivot", member, "schedule")["pivots"][-1]
    assert set(first["account_ids"]) - set(ring)
    while ep.observation()["evasion_count"] < 3:
        ep.step("inspect", member)
    after = {t: {g: net.traces.value(net, t, g) for g in ring} for t in ("schedule", "ip")}
    assert set(after["schedule"].values()).isdisjoint(before["schedule"].values())
    assert len(set(after["schedule"].values())) == 1  # the ring moved together
    assert any(before["ip"][g] != after["ip"][g] for g in ring)
    later = ep.step("pivot", member, "schedule")["pivots"][-1]
    assert set(later["account_ids"]) != set(first["account_ids"])  # innocents stayed behind
    assert set(later["account_ids"]) <= set(ring)


# -- generations ------------------------------------------------------------------------------
def test_no_single_trace_works_against_every_generation():
    for trace in TRACES:
        assert min(trace_strengths(GENERATIONS[g])[trace] for g in NAMED) <= 0.3, trace
    assert trace_strengths(GENERATIONS["classic"]) == dict.fromkeys(TRACES, 1.0)


@pytest.mark.parametrize("tactics", ["residential_proxies", "crafted_content", "diversified"])
def test_a_weakened_trace_returns_ordinary_users(tactics):
    """The weakened trace of a member is a crowd's value, not an empty search, and holds far
    fewer of the other members than classic's (all of them)."""
    weak = [t for t, s in trace_strengths(GENERATIONS[tactics]).items() if s < 0.5]
    for seed in range(10):
        ep = Episode("hard", seed, tactics=tactics)
        ring = set(ep.network.gang_ids)
        for trace in weak:
            sharing = [_sharing(ep, trace, g) for g in sorted(ring)]
            innocents = [len(s - ring) for s in sharing]
            assert statistics.mean(innocents) >= 3, (seed, trace, innocents)
            # classic: every other member; weakened: at most half of them on average
            assert statistics.mean(len(s & ring) for s in sharing) <= (len(ring) - 1) / 2


def test_the_trace_pass_reads_the_network_and_never_edits_it():
    """Traces come from their own RNG and only read the finished network, so every existing
    field of every generation stays what the classic build and the playbook made it."""
    for tactics in ["classic", "aged_accounts", "loose_cells", "diversified", "mixed"]:
        net = generate_network("medium", 8, tactics)

        def fields(n=net):
            return [
                {k: v for k, v in a.items() if k != "traces"}
                for a in network_to_dict(n)["accounts"]
            ]

        before = fields()
        pool = {net.accounts[g].ip_cluster_id for g in net.gang_ids}
        again = build_traces(net, resolve_playbook("medium", 8, tactics), pool)
        assert fields() == before
        assert every_value(net, again) == every_value(net, net.traces) or tactics != "classic"


def test_the_catalogue_lists_the_traces_and_each_generation_says_what_it_does():
    doc = tasks_catalog()
    assert [t["name"] for t in doc["traces"]] == list(TRACES)
    assert doc["pivot_page_size"] == PAGE_SIZE
    pivot = next(a for a in doc["actions"] if a["action_type"] == "pivot")
    assert pivot["steps"] == 1 and pivot["needs_trace"] and pivot["needs_account_id"]
    assert "trace" in doc["action_schema"]["properties"]
    for row in doc["tactics"]:
        if row["name"] in ("mixed", "adaptive"):
            assert row["traces"] is None
        else:
            assert row["traces"] == trace_strengths(resolve_playbook("hard", 0, row["name"]))


def test_the_pivoting_oracle_still_wins_and_pivots():
    for tactics in ("classic", "diversified", "mixed"):
        for seed in range(5):
            res = run_policy("oracle", "hard", seed, tactics, pivots=True)
            assert res["won"] and res["pivots"] >= 1, (tactics, seed, res)


# -- over the wire ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def base_url():
    with ThreadedServer(build_app(ServerSettings(max_ws_sessions=4))) as url:
        yield url


def test_a_pivot_over_http_matches_the_engine_and_replays_by_index(base_url: str) -> None:
    ep = Episode("hard", 6)
    member = _inspected_member(ep)
    want = ep.step("pivot", member, "creation")
    with httpx.Client(base_url=base_url, timeout=30) as http:
        eid = http.post("/reset", json={"task": "hard", "seed": 6}).json()["observation"][
            "episode_id"
        ]
        http.post("/step", json={"episode_id": eid, "action": {"action_type": "inspect",
                                                               "account_id": member}})  # fmt: skip
        body = {
            "episode_id": eid,
            "action_index": 1,
            "action": {"action_type": "pivot", "account_id": member, "trace": "creation"},
        }
        first = http.post("/step", json=body)
        again = http.post("/step", json=body)
        assert first.status_code == 200 and again.headers.get("X-Fakegang-Replayed") == "true"
        assert first.content == again.content
        got = first.json()["observation"]
        assert got["pivots"] == want["pivots"] and got["message"] == want["message"]
        other = {**body, "action": {**body["action"], "trace": "ip"}}
        conflict = http.post("/step", json=other)
        assert conflict.status_code == 409 and "different action" in conflict.json()["message"]
        long = {**body, "action_index": 2, "action": {**body["action"], "trace": "x" * 33}}
        assert http.post("/step", json=long).status_code == 422
        typed = {**body, "action_index": 2, "action": {**body["action"], "trace": 3}}
        assert http.post("/step", json=typed).status_code == 422
        assert http.get("/state", params={"episode_id": eid}).json()["action_count"] == 2
        assert [t["name"] for t in http.get("/tasks").json()["traces"]] == list(TRACES)


def test_a_pivot_over_ws_and_through_the_typed_client(base_url: str) -> None:
    from fakegang_env.client import FakeGangEnv
    from fakegang_env.models import FakeGangAction

    ep = Episode("medium", 2)
    member = _inspected_member(ep)
    want = ep.step("pivot", member, "bio")
    with WsSession(base_url) as ws:
        ws.reset(task="medium", seed=2)
        ws.step({"action_type": "inspect", "account_id": member})
        got = ws.step({"action_type": "pivot", "account_id": member, "trace": "bio"})
        assert got["observation"]["pivots"] == want["pivots"] and got["reward"] == -0.01
        bad = ws.step({"action_type": "pivot", "account_id": member, "trace": "mood"})
        assert "unknown trace 'mood'" in bad["observation"]["last_action_error"]
    with FakeGangEnv(base_url=base_url).sync() as env:
        env.reset(task="medium", seed=2)
        env.step(FakeGangAction(action_type="inspect", account_id=member))
        result = env.step({"action_type": "pivot", "account_id": member, "trace": "bio"})
        assert [p.model_dump() for p in result.observation.pivots] == want["pivots"]


def test_the_agents_http_client_sends_a_pivot(base_url: str) -> None:
    from fakegang.tools.env_client import EnvClient

    ep = Episode("easy", 3)
    member = _inspected_member(ep)
    want = ep.step("pivot", member, "schedule")
    with EnvClient(base_url) as client:
        obs = client.reset("easy", seed=3)
        client.step(obs.episode_id, "inspect", member, 0)
        got = client.step(obs.episode_id, "pivot", member, 1, trace="schedule")
        assert [p.model_dump() for p in got.pivots] == want["pivots"]
