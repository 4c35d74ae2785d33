"""Built-in reference policies: `random`, `naive` and `oracle`, and an in-process runner.

They calibrate the environment (ENVIRONMENT.md, "Calibration"): `oracle` shows the budgets are
sufficient, `naive` shows that thresholding content scores is not enough on the harder tasks,
`random` is the floor. They only read the observation dict (the oracle also reads the hidden
ring), so they also run against a remote server.
"""

from __future__ import annotations

import random
from typing import Protocol

from fakegang_env.engine import Episode
from fakegang_env.network import Network
from fakegang_env.tactics import Playbook

__all__ = [
    "POLICY_NAMES",
    "Policy",
    "RandomPolicy",
    "NaivePolicy",
    "OraclePolicy",
    "make_policy",
    "play_recorded",
    "run_policy",
]

POLICY_NAMES: tuple[str, ...] = ("random", "naive", "oracle")


class Policy(Protocol):
    def act(self, obs: dict) -> tuple[str, str | None]:
        """Next action as (action_type, account_id)."""
        ...


class RandomPolicy:
    """Uniformly random legal-looking actions; submits when one step is left."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(f"random-policy:{seed}")

    def act(self, obs: dict) -> tuple[str, str | None]:
        left = obs["steps_remaining"]
        visible = obs["visible_account_ids"]
        if left <= 1 or not visible:
            return ("submit", None)
        flagged = obs["flagged_ids"]
        u = self.rng.random()
        if u < 0.1 and left >= 3:
            return ("investigate_network", self.rng.choice(visible))
        if u < 0.4:
            flagged_set = set(flagged)
            unflagged = [v for v in visible if v not in flagged_set]
            if unflagged:
                return ("flag", self.rng.choice(unflagged))
        if u < 0.45 and flagged:
            return ("unflag", self.rng.choice(flagged))
        return ("inspect", self.rng.choice(visible))


class NaivePolicy:
    """Inspect in discovery order, flag on a fixed content-score threshold, submit near the end.

    The one concession to common sense: accounts followed by a flagged account are inspected
    first (an analyst's snowball). It never looks at ages, hours, IPs or co-follows.
    """

    WEIGHTS = {"photo_reuse_score": 0.3, "bio_template_score": 0.3, "comment_repeat_score": 0.4}
    THRESHOLD = 0.33

    def __init__(self) -> None:
        self.judged: set[str] = set()

    @classmethod
    def content_score(cls, profile: dict) -> float:
        return sum(w * profile[k] for k, w in cls.WEIGHTS.items())

    def act(self, obs: dict) -> tuple[str, str | None]:
        flagged = set(obs["flagged_ids"])
        for prof in obs["visible_accounts"]:
            aid = prof["account_id"]
            if aid in self.judged:
                continue
            self.judged.add(aid)
            if aid not in flagged and self.content_score(prof) >= self.THRESHOLD:
                return ("flag", aid)
        if obs["steps_remaining"] <= 1:
            return ("submit", None)
        inspected = set(obs["inspected_ids"])
        edges = obs["graph_edges"]
        for f in obs["flagged_ids"]:  # a list: iteration order must not depend on hashing
            for lead in edges.get(f, ()):
                if lead not in inspected:
                    return ("inspect", lead)
        for v in obs["visible_account_ids"]:
            if v not in inspected:
                return ("inspect", v)
        return ("submit", None)


class OraclePolicy:
    """Knows the ring; still discovers it with legal actions (investigate members, flag, submit)."""

    def __init__(self, network: Network) -> None:
        self.gang = set(network.gang_ids)

    def act(self, obs: dict) -> tuple[str, str | None]:
        flagged = set(obs["flagged_ids"])
        for v in obs["visible_account_ids"]:
            if v in self.gang and v not in flagged:
                return ("flag", v)
        if self.gang <= flagged:
            return ("submit", None)
        left = obs["steps_remaining"]
        investigated = set(obs["investigated_ids"])
        inspected = set(obs["inspected_ids"])
        if left >= 2:
            for f in obs["flagged_ids"]:
                if f not in investigated:
                    return ("investigate_network", f)
        if left >= 2:
            for f in obs["flagged_ids"]:
                if f not in inspected:
                    return ("inspect", f)
        return ("submit", None)


def play_recorded(episode: Episode, policy: Policy) -> list[tuple[str, str | None]]:
    """Play `policy` to the end of `episode`; the actions it took, in order (for replaying the
    same episode elsewhere: canaries, load and resource benches, mirrored tests)."""
    obs, actions = episode.observation(), []
    while not episode.done:
        action = policy.act(obs)
        obs = episode.step(*action)
        actions.append(action)
    return actions


def make_policy(name: str, *, network: Network | None = None, seed: int = 0) -> Policy:
    """Build a policy by name; `oracle` needs the episode's network (it reads the hidden ring)."""
    if name == "random":
        return RandomPolicy(seed)
    if name == "naive":
        return NaivePolicy()
    if name == "oracle":
        if network is None:
            raise ValueError("the oracle policy needs the episode's network (network=...)")
        return OraclePolicy(network)
    raise ValueError(f"unknown policy {name!r}; valid: {', '.join(POLICY_NAMES)}")


def run_policy(name: str, task: str, seed: int, tactics: str | Playbook = "classic") -> dict:
    """Play one episode in-process under `tactics`; `actions` is the number of applied actions."""
    ep = Episode(task, seed, tactics=tactics)
    policy = make_policy(name, network=ep.network, seed=seed)
    obs = ep.observation()
    limit = 20 * ep.task_spec.max_steps + 200  # a policy stuck on illegal actions still ends
    for _ in range(limit):
        if ep.done:
            break
        action_type, account_id = policy.act(obs)
        obs = ep.step(action_type, account_id)
    if not ep.done:
        obs = ep.step("submit", None)
    g = ep.grader()
    assert g is not None
    return {
        "task": task,
        "seed": seed,
        "policy": name,
        "won": g["won"],
        "grader_score": g["score"],
        "steps_used": g["steps_used"],
        "reward": obs["episode_return"],
        "tp": g["tp"],
        "fp": g["fp"],
        "fn": g["fn"],
        "recall": g["recall"],
        "precision": g["precision"],
        "actions": ep.action_count,
    }
