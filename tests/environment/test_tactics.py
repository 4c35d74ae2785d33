"""Playbooks, generations, `mixed` and campaigns: shapes, validation and determinism."""

from __future__ import annotations

import hashlib
import json

import pytest

from fakegang_env.generator import generate_network, network_to_dict
from fakegang_env.tactics import (
    CHANNELS,
    CLASSIC,
    GENERATION_NOTES,
    GENERATIONS,
    REGIME_ROUNDS,
    TACTICS_NAMES,
    Playbook,
    UnknownTacticsError,
    campaign_round,
    campaign_schedule,
    resolve_playbook,
)
from fakegang_env.tasks import TASKS, UnknownTaskError

NAMED = [n for n in GENERATIONS if n != "classic"]


def digest(task: str, seed: int, playbook) -> str:
    data = network_to_dict(generate_network(task, seed, playbook))
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def test_catalogue_shape() -> None:
    assert CHANNELS == (
        "creation_burst",
        "posting_sync",
        "content_reuse",
        "shared_proxies",
        "ring_density",
        "lockstep_cofollow",
        "camouflage",
        "renames",
        "evasion",
    )
    assert TACTICS_NAMES[0] == "classic" and TACTICS_NAMES[-1] == "mixed"
    assert list(TACTICS_NAMES[1:-1]) == NAMED and len(NAMED) >= 5
    assert set(GENERATION_NOTES) == set(TACTICS_NAMES)
    assert CLASSIC.is_classic and all(v == 1.0 for v in CLASSIC.channels.values())


@pytest.mark.parametrize("name", NAMED)
def test_named_generations_weaken_two_or_three_channels_and_keep_evidence(name: str) -> None:
    pb = GENERATIONS[name]
    assert pb.name == name and not pb.is_classic
    weak = [c for c, v in pb.channels.items() if v < 1.0]
    assert 2 <= len(weak) <= 3
    assert sum(1 for v in pb.channels.values() if v == 1.0) >= 3


def test_playbook_to_dict_is_json_and_round_trips() -> None:
    for pb in [*GENERATIONS.values(), resolve_playbook("hard", 3, "mixed")]:
        data = json.loads(json.dumps(pb.to_dict()))
        assert data["name"] == pb.name and list(data["channels"]) == list(CHANNELS)
        assert Playbook.from_dict(data) == pb


@pytest.mark.parametrize(
    ("channels", "match"),
    [
        ({c: 1.0 for c in CHANNELS[:-1]}, "missing"),
        ({**{c: 1.0 for c in CHANNELS}, "speed": 1.0}, "unknown"),
        ({**{c: 1.0 for c in CHANNELS}, "renames": 1.5}, r"in \[0, 1\]"),
        ({**{c: 1.0 for c in CHANNELS}, "renames": -0.1}, r"in \[0, 1\]"),
        ({**{c: 1.0 for c in CHANNELS}, "renames": True}, "number"),
        ({**{c: 1.0 for c in CHANNELS}, "renames": "0.5"}, "number"),
    ],
)
def test_bad_playbooks_are_refused(channels: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Playbook("bad", channels)


def test_resolve_playbook_and_its_errors() -> None:
    assert resolve_playbook("hard", 0) is CLASSIC
    assert resolve_playbook("hard", 0, "loose_cells") is GENERATIONS["loose_cells"]
    with pytest.raises(UnknownTacticsError, match="valid: classic, aged_accounts"):
        resolve_playbook("hard", 0, "sneaky")
    with pytest.raises(UnknownTaskError):
        resolve_playbook("impossible", 0, "classic")
    with pytest.raises(ValueError, match=">= 0"):
        resolve_playbook("hard", -1, "mixed")


def test_mixed_draws_its_own_mix_per_seed_and_task() -> None:
    mixes = [resolve_playbook("hard", s, "mixed") for s in range(30)]
    assert mixes[4] == resolve_playbook("hard", 4, "mixed")  # pure in (task, seed)
    assert len({tuple(m.channels.values()) for m in mixes}) == 30
    assert resolve_playbook("medium", 4, "mixed") != mixes[4]
    for m in mixes:
        assert m.name == "mixed"
        weak = [v for v in m.channels.values() if v <= 0.5]
        assert 2 <= len(weak) <= 4 and not m.is_classic


@pytest.mark.parametrize("tactics", [*NAMED, "mixed"])
def test_every_generation_is_deterministic_and_differs_from_classic(tactics: str) -> None:
    for task in TASKS:
        once = digest(task, 11, tactics)
        assert once == digest(task, 11, tactics)
        assert once != digest(task, 11, "classic")


def test_classic_by_name_or_object_is_the_untouched_generator() -> None:
    base = digest("hard", 5, None)
    assert digest("hard", 5, "classic") == base
    assert digest("hard", 5, CLASSIC) == base
    assert digest("hard", 5, Playbook("renamed", dict(CLASSIC.channels))) == base


@pytest.mark.parametrize("tactics", [*NAMED, "mixed"])
def test_a_playbook_keeps_the_ring_and_the_leads(tactics: str) -> None:
    classic, shifted = generate_network("hard", 8), generate_network("hard", 8, tactics)
    assert shifted.gang_ids == classic.gang_ids
    assert shifted.starting_ids == classic.starting_ids
    assert shifted.reported_id == classic.reported_id
    assert set(shifted.accounts) == set(classic.accounts)
    for a in shifted.accounts.values():  # follow lists and counts stay consistent
        assert all(f in shifted.accounts for f in a.follows)
        assert len(set(a.follows)) == len(a.follows)
        assert a.following_count >= len(a.follows)
        assert a.follower_count >= len(shifted.followers_of(a.account_id))


def test_generator_rejects_a_bad_playbook_argument() -> None:
    with pytest.raises(UnknownTacticsError, match="valid"):
        generate_network("easy", 0, "sneaky")
    with pytest.raises(ValueError, match="Playbook or a tactics name"):
        generate_network("easy", 0, 3)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ campaigns
@pytest.mark.parametrize("tactics", ["mixed", "aged_accounts", "classic"])
def test_round_k_is_a_pure_function_of_its_inputs(tactics: str) -> None:
    schedule = campaign_schedule("hard", 7, 25, tactics)
    assert [r.round for r in schedule] == list(range(25))
    for k in (0, 3, 11, 24):
        assert campaign_round("hard", 7, k, tactics) == schedule[k]
    assert campaign_schedule("hard", 7, 25, tactics) == schedule
    assert len({r.seed for r in schedule}) == 25  # each round its own network
    assert [r.seed for r in schedule] == [r.seed for r in campaign_schedule("hard", 7, 25)]
    other = campaign_schedule("hard", 8, 25, tactics)
    assert [r.seed for r in other] != [r.seed for r in schedule]


def test_regimes_last_three_to_six_rounds_and_switch_playbooks() -> None:
    lo, hi = REGIME_ROUNDS
    assert (lo, hi) == (3, 6)
    lengths_seen = set()
    for campaign in range(12):
        rounds = campaign_schedule("medium", campaign, 40, "mixed")
        regimes = [r.regime for r in rounds]
        assert regimes[0] == 0 and regimes == sorted(regimes)
        assert all(b - a in (0, 1) for a, b in zip(regimes, regimes[1:], strict=False))
        last = regimes[-1]
        for reg in range(last):  # every complete regime
            members = [r for r in rounds if r.regime == reg]
            assert lo <= len(members) <= hi
            lengths_seen.add(len(members))
            assert len({json.dumps(r.playbook.to_dict()) for r in members}) == 1
            nxt = next(r for r in rounds if r.regime == reg + 1)
            assert nxt.playbook != members[0].playbook  # the switch is real (hidden)
    assert len(lengths_seen) >= 3  # the length is drawn, not fixed


def test_named_campaign_alternates_with_classic_and_classic_stays_classic() -> None:
    for r in campaign_schedule("hard", 2, 30, "heavy_camouflage"):
        expected = "heavy_camouflage" if r.regime % 2 == 0 else "classic"
        assert r.playbook is GENERATIONS[expected]
    assert all(r.playbook is CLASSIC for r in campaign_schedule("hard", 2, 30, "classic"))


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("hard", -1, 0, "mixed"), ValueError, "campaign must be an integer >= 0"),
        (("hard", 0, -2, "mixed"), ValueError, "round must be an integer >= 0"),
        (("hard", 0, True, "mixed"), ValueError, "round must be an integer >= 0"),
        (("hard", 0, 1000, "mixed"), ValueError, "round must be at most 999"),
        (("hard", 0, 1, "nope"), UnknownTacticsError, "valid: classic"),
        (("nope", 0, 1, "mixed"), UnknownTaskError, "valid tasks"),
    ],
)
def test_bad_campaign_arguments(args: tuple, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        campaign_round(*args)
