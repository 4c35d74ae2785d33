"""Built-in reference policies: `random`, `naive` and `oracle`, and an in-process runner.

They calibrate the environment (ENVIRONMENT.md, "Calibration"): `oracle` shows the budgets are
sufficient, `naive` shows that thresholding content scores is not enough on the harder tasks,
`random` is the floor. They only read the observation dict (the oracle also reads the hidden
ring), so they also run against a remote server.

Each also has a pivoting variant (`pivots=True`, `fakegang env baseline --pivots`) that uses the
`pivot` action; the default variants never pivot and play exactly as they did before pivots
existed (tests/environment/test_classic_pinned.py pins them bit for bit).
"""

from __future__ import annotations

import random
from typing import Protocol

from fakegang_env.engine import Episode
from fakegang_env.network import Network
from fakegang_env.tactics import Playbook
from fakegang_env.traces import PAGE_SIZE, TRACES

__all__ = [
    "POLICY_NAMES",
    "Policy",
    "RandomPolicy",
    "NaivePolicy",
    "OraclePolicy",
    "make_policy",
    "play_policy",
    "play_recorded",
    "run_policy",
]

POLICY_NAMES: tuple[str, ...] = ("random", "naive", "oracle")


#: An action as policies return it: (action_type, account_id), or with a trace for a pivot.
Action = tuple[str, str | None] | tuple[str, str | None, str | None]


class Policy(Protocol):
    def act(self, obs: dict) -> Action:
        """Next action as (action_type, account_id) or ("pivot", account_id, trace)."""
        ...


def _pivoted(obs: dict) -> set[tuple[str, str]]:
    return {(p["account_id"], p["trace"]) for p in obs.get("pivots", ())}


class RandomPolicy:
    """Uniformly random legal-looking actions; submits when one step is left. With `pivots`,
    a tenth of its draws pivot from a random inspected account on a random trace."""

    def __init__(self, seed: int = 0, *, pivots: bool = False) -> None:
        self.rng = random.Random(f"random-policy:{seed}")
        self.pivots = pivots

    def act(self, obs: dict) -> Action:
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
        if self.pivots and u < 0.55 and left >= 3 and obs["inspected_ids"]:
            return ("pivot", self.rng.choice(obs["inspected_ids"]), self.rng.choice(TRACES))
        return ("inspect", self.rng.choice(visible))


class NaivePolicy:
    """Inspect in discovery order, flag on a fixed content-score threshold, submit near the end.

    The one concession to common sense: accounts followed by a flagged account are inspected
    first (an analyst's snowball). It never looks at ages, hours, IPs or co-follows.
    With `pivots`, it also pivots from each account it flagged on the content traces it
    believes in (photo, then bio).
    """

    PIVOT_TRACES = ("photo", "bio")

    WEIGHTS = {"photo_reuse_score": 0.3, "bio_template_score": 0.3, "comment_repeat_score": 0.4}
    THRESHOLD = 0.33

    def __init__(self, *, pivots: bool = False) -> None:
        self.judged: set[str] = set()
        self.pivots = pivots

    @classmethod
    def content_score(cls, profile: dict) -> float:
        return sum(w * profile[k] for k, w in cls.WEIGHTS.items())

    def act(self, obs: dict) -> Action:
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
        if self.pivots and obs["steps_remaining"] >= 3:
            done = _pivoted(obs)
            for f in obs["flagged_ids"]:
                for t in self.PIVOT_TRACES:
                    if f in inspected and (f, t) not in done:
                        return ("pivot", f, t)
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
    """Knows the ring; still discovers it with legal actions (investigate members, flag, submit).
    With `pivots`, it first pivots from flagged members (inspecting them first) on any trace
    whose result page holds a member not yet visible, and investigates only after that."""

    def __init__(self, network: Network, *, pivots: bool = False) -> None:
        self.gang = set(network.gang_ids)
        self.network = network
        self.pivots = pivots

    def _pivot(self, obs: dict) -> Action | None:
        net, traces = self.network, self.network.traces
        if traces is None or obs["steps_remaining"] < 3:
            return None
        visible, inspected = set(obs["visible_account_ids"]), set(obs["inspected_ids"])
        done = _pivoted(obs)
        for f in obs["flagged_ids"]:
            for t in TRACES:
                if (f, t) in done or f not in net.accounts:
                    continue
                page = traces.matches(net, t, f)[:PAGE_SIZE]
                if any(a in self.gang and a not in visible for a in page):
                    return ("pivot", f, t) if f in inspected else ("inspect", f)
        return None

    def act(self, obs: dict) -> Action:
        flagged = set(obs["flagged_ids"])
        for v in obs["visible_account_ids"]:
            if v in self.gang and v not in flagged:
                return ("flag", v)
        if self.gang <= flagged:
            return ("submit", None)
        left = obs["steps_remaining"]
        if self.pivots:
            move = self._pivot(obs)
            if move is not None:
                return move
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


def play_recorded(episode: Episode, policy: Policy) -> list[Action]:
    """Play `policy` to the end of `episode`; the actions it took, in order (for replaying the
    same episode elsewhere: canaries, load and resource benches, mirrored tests)."""
    obs, actions = episode.observation(), []
    while not episode.done:
        action = policy.act(obs)
        obs = episode.step(*action)
        actions.append(action)
    return actions


def make_policy(
    name: str, *, network: Network | None = None, seed: int = 0, pivots: bool = False
) -> Policy:
    """Build a policy by name; `oracle` needs the episode's network (it reads the hidden ring).
    `pivots` picks the variant that uses the pivot action."""
    if name == "random":
        return RandomPolicy(seed, pivots=pivots)
    if name == "naive":
        return NaivePolicy(pivots=pivots)
    if name == "oracle":
        if network is None:
            raise ValueError("the oracle policy needs the episode's network (network=...)")
        return OraclePolicy(network, pivots=pivots)
    raise ValueError(f"unknown policy {name!r}; valid: {', '.join(POLICY_NAMES)}")


def play_policy(name: str, ep: Episode, *, pivots: bool = False) -> dict:
    """Play an episode already built (a campaign round's too) with policy `name` to its end;
    the terminal observation. The policy's seed is the episode's."""
    policy = make_policy(name, network=ep.network, seed=ep.seed, pivots=pivots)
    obs = ep.observation()
    limit = 20 * ep.task_spec.max_steps + 200  # a policy stuck on illegal actions still ends
    for _ in range(limit):
        if ep.done:
            break
        obs = ep.step(*policy.act(obs))
    if not ep.done:
        obs = ep.step("submit", None)
    return obs


def run_policy(
    name: str, task: str, seed: int, tactics: str | Playbook = "classic", *, pivots: bool = False
) -> dict:
    """Play one episode in-process under `tactics`; `actions` is the number of applied actions,
    `pivots` how many of them were pivots."""
    ep = Episode(task, seed, tactics=tactics)
    obs = play_policy(name, ep, pivots=pivots)
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
        "pivots": len(obs["pivots"]),
    }
