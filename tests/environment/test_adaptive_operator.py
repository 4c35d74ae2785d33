"""The adaptive operator (fakegang_env/operator.py), its budget and its round tokens, in-process
and over the real HTTP and WebSocket routes."""

from __future__ import annotations

import json
import random

import pytest
from env_fixtures import ThreadedServer
from http_helpers import make_client, reset, step
from hypothesis import given, settings
from hypothesis import strategies as st

from fakegang_env.client import FakeGangEnv
from fakegang_env.engine import Episode
from fakegang_env.evasion_budget import BUDGET, COSTS, FIXED_CHANNELS, SPENDABLE, cost, fits
from fakegang_env.models import FakeGangAction
from fakegang_env.operator import KEEP_SURVIVAL, OperatorState, after_round, opening
from fakegang_env.operator_token import OperatorTokenError, open_token, seal
from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.tactics import CHANNELS, GENERATIONS, round_seed

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))


def _round(state: OperatorState, flag_share: float, pick: random.Random):
    """Play `state`'s round by flagging a share of its members (and a few innocents); return
    (report, next state, the episode)."""
    ep = Episode.for_adaptive_round(state)
    members = list(ep.network.gang_ids)
    flagged = pick.sample(members, round(flag_share * len(members)))
    return (*after_round(state, ep.network, flagged), ep)


def test_budget_table_prices_every_channel_but_evasion_and_never_affords_everything():
    assert set(SPENDABLE) | set(FIXED_CHANNELS) == set(CHANNELS) and FIXED_CHANNELS == ("evasion",)
    assert all(p.reason and p.cost > 0 for p in COSTS.values())
    # under half of hiding every channel, and every named generation fits with a little to spare
    assert cost(dict.fromkeys(CHANNELS, 0.0)) > 2 * BUDGET
    assert (
        max(cost(g.channels) for g in GENERATIONS.values())
        <= BUDGET
        < 1.25 * cost(GENERATIONS["diversified"].channels)
    )


def test_the_opening_is_drawn_from_the_campaign_seed_and_fits_the_budget():
    a, b = opening("hard", 7), opening("hard", 7)
    assert a == b and fits(a.playbook) and a.round == 0
    openings = {json.dumps(opening("hard", c).playbook, sort_keys=True) for c in range(20)}
    assert len(openings) >= 8  # campaigns open differently
    assert opening("hard", 7).reason.startswith("opening playbook drawn from the campaign seed")


def test_same_takedowns_same_playbooks_and_other_takedowns_another_branch():
    state = opening("medium", 3)
    ep = Episode.for_adaptive_round(state)
    members = list(ep.network.gang_ids)
    first = after_round(state, ep.network, members)  # every member taken down
    again = after_round(state, Episode.for_adaptive_round(state).network, members)
    assert first == again
    assert first[0].caught == len(members) and first[0].survival == 0.0
    branch = after_round(state, ep.network, [])  # a fork that took nobody down
    assert branch[1] != first[1]
    assert branch[0].survival == 1.0 >= KEEP_SURVIVAL
    assert branch[1].playbook == state.playbook and branch[1].reason.startswith("kept")


def test_a_move_explains_itself_in_one_line_with_counts_from_the_takedowns():
    state = opening("hard", 11)
    report, nxt, _ = _round(state, 1.0, random.Random(0))
    assert report.survival == 0.0
    assert "\n" not in nxt.reason and nxt.reason.startswith("weakened ")
    assert nxt.move in SPENDABLE and nxt.playbook[nxt.move] < state.playbook[nxt.move]
    assert " caught members " in nxt.reason or "probe" in nxt.reason


@settings(max_examples=40, deadline=None)
@given(
    campaign=st.integers(0, 10_000),
    task=st.sampled_from(["medium", "hard"]),
    shares=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=6),
    seed=st.integers(0, 2**32),
)
def test_the_budget_is_never_exceeded_whatever_the_takedowns(campaign, task, shares, seed):
    state, pick = opening(task, campaign), random.Random(seed)
    assert fits(state.playbook)
    for share in shares:
        report, state, _ = _round(state, share, pick)
        assert report.cost <= BUDGET + 1e-9
        assert fits(state.playbook), (state.playbook, cost(state.playbook))
        assert all(state.playbook[c] == 1.0 for c in FIXED_CHANNELS)


def test_a_move_spends_what_the_budget_has_left_and_says_so():
    """After a move no channel but the ones it restored to pay could still be weakened: an
    operator with money left over hides more."""
    moved = spent = 0
    for campaign in range(12):
        state, pick = opening("hard", campaign), random.Random(campaign)
        for _ in range(3):
            played = state.playbook
            _, state, _ = _round(state, 1.0, pick)
            if state.move is None:
                continue
            moved += 1
            spent += "spent what was left on " in state.reason
            still_weakenable = [
                c
                for c in SPENDABLE
                if 0.0 < state.playbook[c] <= played[c]
                and fits({**state.playbook, c: max(0.0, state.playbook[c] - 1.0)})
            ]
            assert still_weakenable == [], (state.playbook, state.reason)
    assert moved >= 30 and spent >= 10


def test_nothing_about_the_playbook_shows_before_the_round_ends():
    state = opening("medium", 5)
    ep = Episode.for_adaptive_round(state, seal=lambda s: seal(s, KEY))
    obs = ep.observation()
    assert obs["operator"] is None and "playbook" not in json.dumps(ep.state())
    for aid in list(obs["visible_account_ids"])[:3]:
        obs = ep.step("inspect", aid)
        assert obs["operator"] is None
    obs = ep.step("submit", None)
    debrief = obs["operator"]
    assert debrief["playbook"] == state.playbook and debrief["round"] == 0
    token = debrief["next_token"]
    # the token is opaque: neither channel names nor strengths can be read from it
    assert all(c not in token for c in CHANNELS) and token.startswith("op1.")
    assert open_token(token, KEY, task="medium", campaign=5, round=1) == ep.operator_next


def test_tokens_are_deterministic_and_refuse_edits_other_keys_and_other_rounds():
    state = opening("hard", 2)
    token = seal(state, KEY)
    assert seal(state, KEY) == token  # a replayed run sends the same bytes
    assert open_token(token, KEY, task="hard", campaign=2, round=0) == state
    body = token[4:]
    flipped = token[:4] + ("A" if body[10] != "A" else "B") + body[:10][1:] + body[10:]
    edited = token[:-3] + ("AAA" if token[-3:] != "AAA" else "BBB")
    for bad in (edited, flipped, "op1.", "op1.!!!", "nonsense", token + "x"):
        with pytest.raises(OperatorTokenError) as err:
            open_token(bad, KEY, task="hard", campaign=2, round=0)
        assert err.value.status == 403 and "\n" not in err.value.message
    with pytest.raises(OperatorTokenError) as err:
        open_token(token, OTHER_KEY, task="hard", campaign=2, round=0)
    assert err.value.status == 403 and "another key" in err.value.message
    for task, campaign, k in (("hard", 2, 1), ("hard", 3, 0), ("medium", 2, 0)):
        with pytest.raises(OperatorTokenError) as err:
            open_token(token, KEY, task=task, campaign=campaign, round=k)
        assert err.value.status == 409 and err.value.error == "stale_operator_token"


# -- over HTTP ----------------------------------------------------------------------------------
def _finish(client, obs: dict, flag_all: bool) -> dict:
    """Flag every visible account (or none) and submit; the terminal observation."""
    eid = obs["observation"]["episode_id"]
    index = 0
    if flag_all:
        for aid in obs["observation"]["visible_account_ids"]:
            assert step(client, eid, ("flag", aid), index).status_code == 200
            index += 1
    r = step(client, eid, ("submit", None), index)
    assert r.status_code == 200, r.text
    return r.json()


def test_http_rounds_chain_through_tokens_and_a_fork_branches_the_operator():
    client = make_client()
    body = {"task": "medium", "tactics": "adaptive", "campaign": 9}
    first = reset(client, **body, round=0)
    assert first["observation"]["operator"] is None
    assert first["observation"]["seed"] == round_seed("medium", 9, 0)
    caught = _finish(client, reset(client, **body, round=0), flag_all=True)
    spared = _finish(client, reset(client, **body, round=0), flag_all=False)
    a, b = caught["observation"]["operator"], spared["observation"]["operator"]
    assert a["playbook"] == b["playbook"] == opening("medium", 9).playbook
    assert a["next_token"] != b["next_token"]  # two branches of the operator
    next_a = reset(client, **body, round=1, operator_token=a["next_token"])
    next_b = reset(client, **body, round=1, operator_token=b["next_token"])
    assert next_a["observation"]["seed"] == next_b["observation"]["seed"]
    end_a = _finish(client, next_a, flag_all=False)["observation"]["operator"]
    end_b = _finish(client, next_b, flag_all=False)["observation"]["operator"]
    assert end_b["playbook"] == b["playbook"]  # nobody caught: kept
    assert end_a["round"] == end_b["round"] == 1 and end_a["reason"] != end_b["reason"]


def test_http_refuses_missing_forged_and_stale_tokens_with_one_line_and_serves_on():
    client = make_client()
    body = {"task": "hard", "tactics": "adaptive", "campaign": 4}
    live = reset(client, task="easy", seed=1, episode_id="bystander")
    done = _finish(client, reset(client, **body, round=0), flag_all=False)
    token = done["observation"]["operator"]["next_token"]
    cases = [
        ({**body, "round": 1}, 400, "conflicting_options"),  # no token
        ({**body, "round": 0, "operator_token": token}, 400, "conflicting_options"),
        ({**body, "round": 1, "operator_token": token[:-2] + "zz"}, 403, "invalid_operator_token"),
        ({**body, "round": 1, "operator_token": "op1." + "A" * 80}, 403, "invalid_operator_token"),
        ({**body, "round": 1, "operator_token": "op1.!!!"}, 422, None),  # not base64url
        ({**body, "round": 2, "operator_token": token}, 409, "stale_operator_token"),
        ({**body, "campaign": 5, "round": 1, "operator_token": token}, 409, "stale_operator_token"),
        ({"task": "hard", "tactics": "adaptive", "seed": 3}, 400, "conflicting_options"),
        ({"task": "hard", "seed": 3, "operator_token": token}, 400, "conflicting_options"),
        ({**body, "round": 1, "operator_token": ""}, 422, None),
        ({**body, "round": 1, "operator_token": 5}, 422, None),
    ]
    for request, status, error in cases:
        r = client.post("/reset", json=request)
        assert r.status_code == status, (request, r.text)
        if error:
            assert r.json()["error"] == error and "\n" not in r.json()["message"]
    # the server is unharmed: the other episode steps on, the good token still works
    assert step(client, "bystander", ("submit", None), 0).status_code == 200
    assert live["observation"]["episode_id"] == "bystander"
    assert reset(client, **body, round=1, operator_token=token)["observation"]["operator"] is None


def test_a_token_survives_a_server_restart_with_the_same_key_file():
    body = {"task": "medium", "tactics": "adaptive", "campaign": 1}
    one = make_client()
    token = _finish(one, reset(one, **body, round=0), flag_all=True)["observation"]["operator"]
    two = make_client()  # another app: the same key file ($FAKEGANG_OPERATOR_KEY_FILE)
    assert reset(two, **body, round=1, operator_token=token["next_token"])["observation"]


def test_websocket_plays_an_adaptive_round_and_refuses_a_forged_token():
    app = build_app(ServerSettings(max_ws_sessions=2))
    with ThreadedServer(app) as url, FakeGangEnv(base_url=url).sync() as env:
        result = env.reset(task="medium", tactics="adaptive", campaign=2, round=0)
        assert result.observation.operator is None
        result = env.step(FakeGangAction(action_type="submit"))
        debrief = result.observation.operator
        assert debrief is not None and debrief.survival == 1.0 and debrief.next_token
        with pytest.raises(Exception, match="operator_token"):
            env.reset(
                task="medium", tactics="adaptive", campaign=2, round=1,
                operator_token=debrief.next_token[:-2] + "zz",
            )  # fmt: skip
        again = env.reset(
            task="medium", tactics="adaptive", campaign=2, round=1,
            operator_token=debrief.next_token,
        )  # fmt: skip
        assert again.observation.operator is None


def test_an_unusable_key_file_is_a_503_with_one_line_and_classic_resets_go_on(
    tmp_path, monkeypatch
):
    from fakegang_env.server import rounds

    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the key's folder should be")
    monkeypatch.setenv("FAKEGANG_OPERATOR_KEY_FILE", str(blocked / "operator.key"))
    rounds._key_at.cache_clear()
    try:
        client = make_client()
        r = client.post("/reset", json={"task": "easy", "tactics": "adaptive", "campaign": 1,
                                        "round": 0})  # fmt: skip
        assert r.status_code == 503 and r.json()["error"] == "operator_key_unavailable"
        assert "FAKEGANG_OPERATOR_KEY_FILE" in r.json()["message"]
        assert "\n" not in r.json()["message"]
        assert reset(client, task="easy", seed=2)["observation"]["seed"] == 2
    finally:
        rounds._key_at.cache_clear()
