"""`tactics`, `campaign` and `round` on `/reset` over plain HTTP and `/ws`, the debrief on the
wire, the catalogue, the OpenAPI constraints and the 4xx errors.

The app is served by uvicorn on a free 127.0.0.1 port (a real socket for httpx and OpenEnv's
WebSocket client).
"""

from __future__ import annotations

import httpx
import pytest
from env_fixtures import ThreadedServer, strip_episode_id

from fakegang_env.client import FakeGangEnv
from fakegang_env.engine import Episode
from fakegang_env.models import FakeGangAction, FakeGangObservation
from fakegang_env.server.app import build_app
from fakegang_env.tactics import (
    CAMPAIGN_TACTICS,
    GENERATIONS,
    MAX_ROUND,
    TACTICS_NAMES,
    campaign_round,
)

NAMED = [n for n in GENERATIONS if n != "classic"]


@pytest.fixture(scope="module")
def base_url() -> str:
    with ThreadedServer(build_app()) as url:
        yield url


@pytest.fixture()
def http(base_url: str):
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


def first_view(obs: dict) -> dict:
    keep = ("visible_account_ids", "seed", "task", "ring_ids", "steps_remaining")
    return {k: obs[k] for k in keep}


def test_http_reset_with_tactics_matches_the_engine_and_debriefs(http: httpx.Client) -> None:
    for tactics in ("aged_accounts", "mixed"):
        body = http.post("/reset", json={"task": "hard", "seed": 9, "tactics": tactics}).json()
        obs = body["observation"]
        engine = Episode("hard", 9, tactics=tactics)
        assert first_view(obs) == first_view(engine.observation())
        assert obs["ring_ids"] is None
        target = obs["visible_account_ids"][0]
        step = {"action": {"action_type": "inspect", "account_id": target}}
        step["episode_id"] = obs["episode_id"]
        inspected = http.post("/step", json=step).json()["observation"]
        expected = engine.step("inspect", target)
        assert inspected["visible_accounts"] == expected["visible_accounts"]  # shifted profile
        assert inspected["ring_ids"] is None
        done = http.post(
            "/step",
            json={"action": {"action_type": "submit"}, "episode_id": obs["episode_id"]},
        ).json()
        assert done["done"] is True
        assert done["observation"]["ring_ids"] == sorted(engine.network.gang_ids)
        state = http.get("/state", params={"episode_id": obs["episode_id"]}).json()
        assert "tactics" not in state and "playbook" not in state


def test_http_campaign_round_derives_the_seed(http: httpx.Client) -> None:
    spec = campaign_round("medium", 3, 7, "mixed")
    body = {"task": "medium", "campaign": 3, "round": 7, "tactics": "mixed"}
    obs = http.post("/reset", json=body).json()["observation"]
    assert obs["seed"] == spec.seed
    engine = Episode.for_round("medium", 3, 7, "mixed")
    assert first_view(obs) == first_view(engine.observation())
    # without tactics the campaign is classic, the seed derivation is the same
    plain = http.post("/reset", json={"task": "medium", "campaign": 3, "round": 7}).json()
    assert plain["observation"]["seed"] == spec.seed


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"task": "hard", "seed": 1, "campaign": 2, "round": 0}, 400, "seed cannot be combined"),
        ({"task": "hard", "round": 2}, 400, "round needs campaign"),
        ({"task": "hard", "campaign": 2}, 400, "campaign needs round"),
        ({"task": "hard", "tactics": "sneaky"}, 422, "'aged_accounts'"),
        ({"task": "hard", "tactics": 3}, 422, "tactics"),
        ({"task": "hard", "campaign": -1, "round": 0}, 422, "greater than or equal to 0"),
        ({"task": "hard", "campaign": 1, "round": -3}, 422, "greater than or equal to 0"),
        ({"task": "hard", "campaign": "1", "round": 0}, 422, "campaign"),
        ({"task": "hard", "campaign": 1, "round": 1.5}, 422, "round"),
        ({"task": "hard", "campaign": True, "round": 0}, 422, "campaign"),
        # a huge round used to spin the server (regimes are drawn up to it): refused at once
        ({"task": "hard", "campaign": 1, "round": 2**40}, 422, "less than or equal to 999"),
    ],
)
def test_bad_reset_options_get_a_readable_4xx(http, body, status, needle) -> None:
    before = http.get("/state")  # the default episode, if any, must not change
    resp = http.post("/reset", json=body)
    assert resp.status_code == status, resp.text
    err = resp.json()
    assert needle in err["message"]
    if needle == "'aged_accounts'":  # the valid values are listed
        assert all(f"'{name}'" in err["message"] for name in TACTICS_NAMES)
    after = http.get("/state")
    assert after.status_code == before.status_code
    if before.status_code == 200:
        assert after.json() == before.json()


def test_openapi_declares_the_reset_constraints(http: httpx.Client) -> None:
    spec = http.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    reset = schemas["ResetParams"]["properties"]
    tactics = reset["tactics"]
    enum_schema = schemas[tactics["$ref"].rsplit("/", 1)[-1]] if "$ref" in tactics else tactics
    assert enum_schema["enum"] == list(CAMPAIGN_TACTICS)
    for name in ("campaign", "round"):
        options = reset[name]["anyOf"]
        assert any(o.get("type") == "integer" and o.get("minimum") == 0 for o in options)
    assert next(o for o in reset["round"]["anyOf"] if "maximum" in o)["maximum"] == MAX_ROUND
    # the combination rule (400 on a conflict) is in the schema too: seed xor campaign round
    shapes = schemas["ResetParams"]["anyOf"]
    assert shapes[1]["required"] == ["campaign", "round"]
    assert shapes[1]["properties"]["seed"] == {"type": "null"}


def test_tasks_lists_the_generations(http: httpx.Client) -> None:
    rows = http.get("/tasks").json()["tactics"]
    assert [r["name"] for r in rows] == list(CAMPAIGN_TACTICS)
    assert all(isinstance(r["description"], str) and r["description"] for r in rows)
    by_name = {r["name"]: r for r in rows}
    assert by_name["loose_cells"]["channels"] == GENERATIONS["loose_cells"].channels


def test_ws_reset_options_and_debrief(base_url: str) -> None:
    spec = campaign_round("hard", 4, 2, "loose_cells")
    with FakeGangEnv(base_url=base_url).sync() as env:
        result = env.reset(task="hard", campaign=4, round=2, tactics="loose_cells")
        assert result.observation.seed == spec.seed and result.observation.ring_ids is None
        engine = Episode.for_round("hard", 4, 2, "loose_cells")
        expected = FakeGangObservation.model_validate(engine.observation()).model_dump()
        assert strip_episode_id(result.observation.model_dump()) == strip_episode_id(expected)
        result = env.step(FakeGangAction(action_type="submit"))
        assert result.done and result.observation.ring_ids == sorted(engine.network.gang_ids)

        result = env.reset(task="easy", seed=3, tactics="crafted_content")
        engine = Episode("easy", 3, tactics="crafted_content")
        assert result.observation.visible_account_ids == engine.observation()["visible_account_ids"]
        with pytest.raises(RuntimeError, match="aged_accounts"):
            env.reset(task="easy", tactics="sneaky")
        with pytest.raises(RuntimeError, match="seed cannot be combined"):
            env.reset(task="easy", seed=1, campaign=1, round=0)
        with pytest.raises(RuntimeError, match="round needs campaign"):
            env.reset(task="easy", round=0)
        with pytest.raises(RuntimeError, match="greater than or equal to 0"):
            env.reset(task="easy", campaign=-1, round=0)
        # the session survived every error
        again = env.reset(task="easy", seed=3, tactics="crafted_content")
        assert again.observation.visible_account_ids == result.observation.visible_account_ids
