"""Episodes under a playbook: the debrief, campaign rounds, evasion, and nothing leaked."""

from __future__ import annotations

import json

import pytest

from fakegang_env.engine import Episode
from fakegang_env.generator import PARAMS
from fakegang_env.playbook import evasion_params
from fakegang_env.policies import make_policy
from fakegang_env.schema import PlainObservation
from fakegang_env.tactics import (
    CHANNELS,
    CLASSIC,
    GENERATIONS,
    Playbook,
    UnknownTacticsError,
    campaign_round,
    resolve_playbook,
)


def play(episode: Episode, policy: str) -> list[dict]:
    agent = make_policy(policy, network=episode.network, seed=episode.seed)
    obs = episode.observation()
    seen = [obs]
    while not episode.done:
        obs = episode.step(*agent.act(obs))
        seen.append(obs)
    return seen


@pytest.mark.parametrize(
    ("task", "tactics", "policy"),
    [
        ("easy", "classic", "naive"),
        ("hard", "classic", "oracle"),
        ("medium", "crafted_content", "random"),
        ("hard", "mixed", "naive"),
    ],
)
def test_debrief_is_the_ring_on_the_terminal_observation_only(task, tactics, policy) -> None:
    episode = Episode(task, 21, tactics=tactics)
    seen = play(episode, policy)
    assert all(o["ring_ids"] is None for o in seen[:-1])
    assert seen[-1]["done"] and seen[-1]["ring_ids"] == sorted(episode.network.gang_ids)
    PlainObservation(**seen[-1])  # the wire model accepts it
    # an illegal action after the end still shows the debrief (the episode is over)
    after = episode.step("submit", None)
    assert after["last_action_error"] and after["ring_ids"] == seen[-1]["ring_ids"]


def test_forced_submit_also_carries_the_debrief() -> None:
    episode = Episode("easy", 2, tactics="loose_cells")
    obs = episode.observation()
    target = obs["visible_account_ids"][0]
    while not obs["done"]:
        assert obs["ring_ids"] is None
        obs = episode.step("inspect", target)
    assert obs["ring_ids"] == sorted(episode.network.gang_ids)


@pytest.mark.parametrize("tactics", [*GENERATIONS, "mixed"])
def test_the_playbook_is_in_no_observation_and_no_state(tactics: str) -> None:
    episode = Episode("medium", 4, tactics=tactics)
    text = json.dumps([*play(episode, "random"), episode.state(), episode.grader()])
    names = [g for g in GENERATIONS if g != "classic"]
    channels = [c for c in CHANNELS if c != "evasion"]  # `evasion_count` is a classic field
    for word in (*channels, "playbook", "tactics", *names):
        assert word not in text


def test_for_round_is_the_derived_seed_under_the_regime_playbook() -> None:
    for k in (0, 4, 9):
        spec = campaign_round("hard", 5, k, "mixed")
        episode = Episode.for_round("hard", 5, k, "mixed", episode_id="e")
        assert episode.seed == spec.seed and episode.playbook == spec.playbook
        twin = Episode("hard", spec.seed, "e", tactics=spec.playbook)
        assert play(episode, "naive") == play(twin, "naive")


def test_episode_tactics_by_name_equals_by_playbook_and_bad_names_fail() -> None:
    by_name = play(Episode("medium", 9, tactics="mixed"), "naive")
    by_object = play(Episode("medium", 9, tactics=resolve_playbook("medium", 9, "mixed")), "naive")
    assert by_name == by_object
    with pytest.raises(UnknownTacticsError, match="valid: classic"):
        Episode("medium", 9, tactics="sneaky")
    with pytest.raises(ValueError, match="valid tasks"):
        Episode("nope", 9, tactics="sneaky")  # the task is reported first


def test_evasion_channel_strengthens_adaptation_and_classic_keeps_the_task_knobs() -> None:
    assert evasion_params("hard", CLASSIC) is PARAMS["hard"]
    weak = Playbook("evasive", {**CLASSIC.channels, "evasion": 0.0})
    p, q = PARAMS["hard"], evasion_params("hard", weak)
    assert q.evasion_drop > p.evasion_drop and q.evasion_rotate > p.evasion_rotate
    assert q.evasion_hour_shift[1] > p.evasion_hour_shift[1]
    # same network, stronger evasion: the ring loses more intra-ring follows by the end
    plain, evasive = Episode("hard", 3), Episode("hard", 3, tactics=weak)
    play(plain, "naive"), play(evasive, "naive")

    def intra(ep: Episode) -> int:
        ring = set(ep.network.gang_ids)
        return sum(1 for g in ring for f in ep.network.accounts[g].follows if f in ring)

    assert intra(evasive) < intra(plain)
