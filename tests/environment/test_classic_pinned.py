"""`classic` is the generator as it was before tactics existed, bit for bit.

The digests below were computed on the generator and engine *before* playbooks were added
(commit a4df87a). They cover the network with its hidden truth and every observation of three
reference policies (naive, oracle, random: inspect, investigate, flag, unflag, illegal actions,
every evasion), for five seeds per task. Any change to a draw, an order or a rounding moves them.

The deliberate additions are stripped before hashing: the debrief (`ring_ids`, terminal only;
its own tests are in test_tactics_episode.py), the observation's `pivots` (always empty here:
these policies never pivot) and each generated account's `traces` (tests in test_pivots.py).
"""

from __future__ import annotations

import hashlib
import json

import pytest

from fakegang_env.engine import Episode
from fakegang_env.generator import generate_network, network_to_dict
from fakegang_env.policies import make_policy

SEEDS = (0, 1, 2, 7, 123)

# task -> seed -> (network, naive observations, oracle observations, random observations)
PINNED: dict[str, dict[int, tuple[str, str, str, str]]] = {
    "easy": {
        0: ("e3d5f96dce011d28", "434875a589237a87", "d947f777eba1807d", "297db650174e2bbc"),
        1: ("3aa5bcc637380d53", "5e53b20b458673a5", "c1ff33616e782cf6", "24c74b96a9e9cff1"),
        2: ("f5872ad11d533f7c", "72ef5c227b7d893b", "553d9b1e1748425b", "2135293591ce21d5"),
        7: ("9aa9009dee4aceb4", "1141d6aa03bfaaec", "a9f8f9cf7573ceef", "e97ab30d350bc099"),
        123: ("20d92268f2fada30", "fa00a49aae9349e4", "e22557105c7f75e0", "5644941168b8d1a2"),
    },
    "medium": {
        0: ("37c179da4b4f721b", "9a96b5218a4a4c23", "a063a1ebb8dfaf2c", "c9be8e5bb33e6e2f"),
        1: ("e806441c100f9de5", "ac5e071226dc6ed1", "ef06347cc4ec7005", "2f1841da9e6fdc82"),
        2: ("3ef6bb2fbc2c1560", "2a055ef81b53bcd7", "716a7449ed7238ae", "5e95bc34217a6441"),
        7: ("27d56eafa40fa44b", "d4be7b32422fe1ab", "2042a6aa5e82bdb1", "4e1f3839425271aa"),
        123: ("687766552455b000", "2bad99379abcd839", "b0b72ecfa077a02d", "6bb1a16c5ce227aa"),
    },
    "hard": {
        0: ("530648efaff9c74b", "c805af68f4e90e42", "ade28735dce79f6f", "c8647ad9e78eea29"),
        1: ("56776492b21b78a8", "b68d21bc75bf3f47", "e06e445f262985ad", "e41fa5b3536ac06f"),
        2: ("772d138147c4c357", "43f1c29f7c49bdd9", "35a965bb2d00f9f3", "84726961e04463c0"),
        7: ("398254c71dd85d74", "736235f5ccf28914", "3f86a01b4a4439aa", "686179ab2eb9717c"),
        123: ("3318f71d19199cae", "d63fdd3cc6dc671e", "1e2440f450a73ef6", "e0ed2f740adc2adc"),
    },
}


def _digest(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


ADDITIVE_OBSERVATION_KEYS = ("ring_ids", "pivots", "operator")


def _without_debrief(obs: dict) -> dict:
    assert obs["pivots"] == []  # nothing here pivots: the key only exists
    assert obs["operator"] is None  # only adaptive campaign rounds have an operator debrief
    return {k: v for k, v in obs.items() if k not in ADDITIVE_OBSERVATION_KEYS}


def _network_without_traces(data: dict) -> dict:
    accounts = [{k: v for k, v in a.items() if k != "traces"} for a in data["accounts"]]
    return {**data, "accounts": accounts}


def _play_digest(episode: Episode, policy_name: str, seed: int) -> str:
    policy = make_policy(policy_name, network=episode.network, seed=seed)
    obs = episode.observation()
    h = hashlib.sha256(json.dumps(_without_debrief(obs), sort_keys=True).encode())
    while not episode.done:
        obs = episode.step(*policy.act(obs))
        h.update(json.dumps(_without_debrief(obs), sort_keys=True).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("task", list(PINNED))
def test_classic_networks_and_observations_are_unchanged(task):
    for seed in SEEDS:
        expected = PINNED[task][seed]
        got = (
            _digest(_network_without_traces(network_to_dict(generate_network(task, seed)))),
            _play_digest(Episode(task, seed), "naive", seed),
            _play_digest(Episode(task, seed), "oracle", seed),
            _play_digest(Episode(task, seed), "random", seed),
        )
        assert got == expected, f"{task} seed {seed} moved: {got} != {expected}"
