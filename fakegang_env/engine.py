"""One investigation episode: the action mechanics, evasion, and the terminal scoring.

Pure Python (no OpenEnv import) so the server, the policies and the tests share one implementation.
Every observation is a pure function of `(task, seed, actions applied so far)`.

Evasion timing (documented choice): a scheduled event at step s fires right after the action
whose cost takes `step_count` from below s to s or beyond, before that action's observation is
returned. A snapshot taken by INSPECT therefore predates evasion event s exactly when its
`inspected_at_step` (the step count *before* the inspection) is below s.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from fakegang_env import scoring
from fakegang_env.generator import Network, generate_network
from fakegang_env.operator import OperatorState, after_round
from fakegang_env.playbook import evasion_params
from fakegang_env.schema import STEP_COST, STEP_REWARD, ActionType
from fakegang_env.tactics import (
    CLASSIC,
    MIXED,
    Playbook,
    campaign_round,
    resolve_playbook,
    round_seed,
)
from fakegang_env.tasks import TaskSpec, get_task
from fakegang_env.traces import PAGE_SIZE, build_traces

__all__ = ["Episode", "Sealer", "parse_action_type"]

#: Turns the operator's next state into the opaque token the debrief carries (the server's key).
Sealer = Callable[[OperatorState], str]

_VALID_TYPES = ", ".join(t.value for t in ActionType)


def parse_action_type(action_type: str | ActionType) -> ActionType:
    """Wire value -> ActionType; unknown values raise ValueError naming the valid ones."""
    if isinstance(action_type, ActionType):
        return action_type
    try:
        return ActionType(str(action_type).lower())
    except ValueError:
        raise ValueError(f"unknown action_type {action_type!r}; valid: {_VALID_TYPES}") from None


class Episode:
    """State of one episode of `(task, seed)` under a playbook (`tactics`, default classic);
    `step` never raises for a well-formed action. The playbook stays hidden: it is in no
    observation and no state, only in `self.playbook` for in-process tools (calibration)."""

    def __init__(
        self,
        task: str,
        seed: int,
        episode_id: str | None = None,
        *,
        tactics: str | Playbook = "classic",
        operator: OperatorState | None = None,
        seal: Sealer | None = None,
    ) -> None:
        if operator is not None:
            playbook = operator.as_playbook()
        elif isinstance(tactics, Playbook):
            playbook = tactics
        else:
            get_task(task)  # an unknown task is reported before an unknown tactics name
            playbook = resolve_playbook(task, seed, tactics)
        self._setup(generate_network(task, seed, playbook), episode_id, playbook)
        self.operator = operator
        self._seal = seal
        #: the operator's state for the next round, once this (adaptive) round has ended
        self.operator_next: OperatorState | None = None
        self._operator_debrief: dict | None = None

    @classmethod
    def for_round(
        cls,
        task: str,
        campaign: int,
        round: int,
        tactics: str = MIXED,
        episode_id: str | None = None,
    ) -> Episode:
        """Round `round` of campaign `campaign`: the derived seed under the regime's playbook."""
        spec = campaign_round(task, campaign, round, tactics)
        return cls(task, spec.seed, episode_id, tactics=spec.playbook)

    @classmethod
    def for_adaptive_round(
        cls, operator: OperatorState, episode_id: str | None = None, seal: Sealer | None = None
    ) -> Episode:
        """The round `operator` plays in its campaign: the round's seed under its playbook; the
        terminal observation carries the operator's debrief (and, with `seal`, its next token)."""
        seed = round_seed(operator.task, operator.campaign, operator.round)
        return cls(operator.task, seed, episode_id, operator=operator, seal=seal)

    @classmethod
    def from_network(
        cls, network: Network, episode_id: str | None = None, playbook: Playbook = CLASSIC
    ) -> Episode:
        """An episode on a given network (hand-made ones in tests); the task comes from it."""
        ep = cls.__new__(cls)
        ep._setup(network, episode_id, playbook)
        ep.operator, ep._seal, ep.operator_next, ep._operator_debrief = None, None, None, None
        return ep

    def _setup(self, network: Network, episode_id: str | None, playbook: Playbook) -> None:
        self.task_spec: TaskSpec = get_task(network.task)
        self.network: Network = network
        if network.traces is None:  # a hand-made network: its ring's current IPs are the pool
            pool = {network.accounts[g].ip_cluster_id for g in network.gang_ids}
            network.traces = build_traces(network, playbook, pool)
        self.playbook: Playbook = playbook
        self._evasion = evasion_params(self.task_spec.name, playbook)
        self.episode_id = episode_id
        self.task = self.task_spec.name
        self.seed = network.seed
        self._gang = frozenset(self.network.gang_ids)
        self._visible: list[str] = list(self.network.starting_ids)
        self._visible_set: set[str] = set(self._visible)
        self._inspected: list[str] = []
        self._investigated: list[str] = []
        self._flagged: list[str] = []
        self._suspect_marks: set[str] = set()
        self._snapshots: dict[str, dict] = {}
        self._pivots: list[dict] = []
        self._step_count = 0
        self._action_count = 0
        self._return = 0.0
        self._done = False
        self._evasion_count = 0
        self._reward: float | None = None
        self._error: str | None = None
        self._message = (
            f"Episode started ({self.task}): {len(self._visible)} account ids are visible; at "
            f"least one of them was reported as a member of a fake-account ring. Budget: "
            f"{self.task_spec.max_steps} steps."
        )
        self._terminal: dict | None = None

    # -- read-only views ------------------------------------------------------------------------
    @property
    def action_count(self) -> int:
        """Actions applied so far (illegal ones are not counted): the server's idempotency index."""
        return self._action_count

    @property
    def step_count(self) -> int:
        return self._step_count

    @property
    def done(self) -> bool:
        return self._done

    @property
    def steps_remaining(self) -> int:
        return self.task_spec.max_steps - self._step_count

    def observation(self) -> dict:
        """The current observation as a JSON-ready dict with exactly PlainObservation's keys."""
        flagged = set(self._flagged)
        marks = self._suspect_marks
        suspects = [v for v in self._visible if v in marks and v not in flagged] if marks else []
        profiles = []
        edges = {}
        for aid in self._inspected:
            snap = self._snapshots[aid]
            follows = list(snap["visible_follows"])
            profiles.append({**snap, "visible_follows": follows})
            edges[aid] = list(follows)
        t = self._terminal or {}
        return {
            "episode_id": self.episode_id,
            "task": self.task,
            "seed": self.seed,
            "message": self._message,
            "last_action_error": self._error,
            "episode_return": self._return,
            "max_steps": self.task_spec.max_steps,
            "steps_remaining": self.steps_remaining,
            "step_count": self._step_count,
            "action_count": self._action_count,
            "visible_account_ids": list(self._visible),
            "inspected_ids": list(self._inspected),
            "investigated_ids": list(self._investigated),
            "flagged_ids": list(self._flagged),
            "suspect_ids": suspects,
            "visible_accounts": profiles,
            "graph_edges": edges,
            "evasion_triggered": self._evasion_count > 0,
            "evasion_count": self._evasion_count,
            "grader_score": t.get("score"),
            "tp": t.get("tp"),
            "fp": t.get("fp"),
            "fn": t.get("fn"),
            "recall": t.get("recall"),
            "precision": t.get("precision"),
            "pivots": [{**p, "account_ids": list(p["account_ids"])} for p in self._pivots],
            "ring_ids": sorted(self._gang) if self._done else None,
            "operator": self._debrief_copy(),
            "done": self._done,
            "reward": self._reward,
        }

    def _debrief_copy(self) -> dict | None:
        """The adaptive round's operator debrief, a fresh copy per observation (as every other
        list and dict in it is)."""
        d = self._operator_debrief
        return None if d is None else {**d, "playbook": dict(d["playbook"])}

    def state(self) -> dict:
        """Episode bookkeeping (no hidden truth)."""
        return {
            "episode_id": self.episode_id,
            "task": self.task,
            "seed": self.seed,
            "step_count": self._step_count,
            "action_count": self._action_count,
            "max_steps": self.task_spec.max_steps,
            "steps_remaining": self.steps_remaining,
            "episode_return": self._return,
            "done": self._done,
            "evasion_count": self._evasion_count,
            "network_size": len(self.network.accounts),
        }

    def grader(self) -> dict | None:
        """None until the episode ends; then the score with its inputs."""
        if self._terminal is None:
            return None
        t = self._terminal
        return {
            "task": self.task,
            "episode_id": self.episode_id,
            "score": t["score"],
            "won": t["won"],
            "tp": t["tp"],
            "fp": t["fp"],
            "fn": t["fn"],
            "recall": t["recall"],
            "precision": t["precision"],
            "steps_used": self._step_count,
        }

    # -- actions --------------------------------------------------------------------------------
    def step(
        self, action_type: str | ActionType, account_id: str | None, trace: str | None = None
    ) -> dict:
        """Apply one action and return the new observation. Illegal actions change nothing.
        `trace` is the pivot's trace name (only pivot takes one)."""
        kind = parse_action_type(action_type)
        if account_id is not None and not isinstance(account_id, str):
            raise ValueError(
                f"account_id must be a string or None, got {type(account_id).__name__}"
            )
        if trace is not None and not isinstance(trace, str):
            raise ValueError(f"trace must be a string or None, got {type(trace).__name__}")
        err = self._illegal(kind, account_id, trace)
        if err is not None:
            self._reward, self._error, self._message = 0.0, err, err
            return self.observation()
        self._error = None
        self._action_count += 1
        cost = STEP_REWARD[kind]
        before = self._step_count
        self._step_count += STEP_COST[kind]
        if kind is ActionType.INSPECT:
            msg = self._inspect(account_id, before)
        elif kind is ActionType.INVESTIGATE_NETWORK:
            msg = self._investigate(account_id)
        elif kind is ActionType.FLAG:
            msg = self._flag(account_id)
        elif kind is ActionType.PIVOT:
            msg = self._pivot(account_id, trace, before)
        elif kind is ActionType.UNFLAG:
            self._flagged.remove(account_id)
            msg = f"Removed the flag from {account_id}."
        else:
            self._finish(cost, forced=False)
            return self.observation()
        msg += self._maybe_evade()
        if self._step_count >= self.task_spec.max_steps:
            self._finish(cost, forced=True)
            return self.observation()
        self._add_reward(cost)
        self._message = msg
        return self.observation()

    def _illegal(self, kind: ActionType, account_id: str | None, trace: str | None) -> str | None:
        name = kind.value.upper()
        if self._done:
            return "Episode is already over: reset to start a new one."
        if trace is not None and kind is not ActionType.PIVOT:
            return f"Cannot {name}: only pivot takes a trace (got trace '{trace[:40]}')."
        if kind is ActionType.SUBMIT:
            return None
        if not account_id:
            return f"Cannot {name}: no account_id given."
        if account_id not in self._visible_set:
            return (
                f"Cannot {name}: account '{account_id}' is not visible (use an id from "
                "visible_account_ids; inspect or investigate to discover more)."
            )
        if kind is ActionType.INVESTIGATE_NETWORK and self.steps_remaining < 2:
            return (
                f"Cannot {name}: it costs 2 steps and only {self.steps_remaining} remains; "
                "inspect, flag or submit instead."
            )
        if kind is ActionType.PIVOT:
            return self._illegal_pivot(account_id, trace)
        if kind is ActionType.FLAG and account_id in self._flagged:
            return f"Cannot {name}: account '{account_id}' is already flagged."
        if kind is ActionType.UNFLAG and account_id not in self._flagged:
            return f"Cannot {name}: account '{account_id}' is not flagged."
        return None

    def _illegal_pivot(self, account_id: str, trace: str | None) -> str | None:
        assert self.network.traces is not None
        valid = ", ".join(self.network.traces.kinds)
        if not trace:
            return f"Cannot PIVOT: no trace given (valid traces: {valid})."
        if trace not in self.network.traces.kinds:
            return f"Cannot PIVOT: unknown trace '{trace[:40]}' (valid traces: {valid})."
        if account_id not in self._snapshots:
            return (
                f"Cannot PIVOT: account '{account_id}' has not been inspected (pivot from an id "
                "in inspected_ids)."
            )
        return None  # it costs one step, like inspect: legal whenever the episode runs

    def _pivot(self, aid: str, trace: str, at_step: int) -> str:
        """A platform search: the accounts sharing `aid`'s current value of `trace`."""
        net = self.network
        assert net.traces is not None
        hits = net.traces.matches(net, trace, aid)
        page = hits[:PAGE_SIZE]
        new = self._reveal(page)
        self._pivots.append(
            {
                "account_id": aid,
                "trace": trace,
                "at_step": at_step,
                "total": len(hits),
                "account_ids": page,
            }
        )
        return (
            f"Pivoted from {aid} on {trace}: {len(hits)} other accounts share it; showing "
            f"{len(page)} ({new} newly visible)."
        )

    def _reveal(self, ids: list[str]) -> int:
        new = 0
        for a in ids:
            if a not in self._visible_set:
                self._visible_set.add(a)
                self._visible.append(a)
                new += 1
        return new

    def _inspect(self, aid: str, at_step: int) -> str:
        net = self.network
        follows = list(net.accounts[aid].follows)
        snap = {"account_id": aid, **net.signals(aid)}
        snap["visible_follows"] = follows
        snap["inspected_at_step"] = at_step
        again = aid in self._snapshots
        self._snapshots[aid] = snap
        if not again:
            self._inspected.append(aid)
        new = self._reveal(follows)
        verb = "Re-inspected" if again else "Inspected"
        return f"{verb} {aid}: follows {len(follows)} accounts ({new} newly visible)."

    def _investigate(self, aid: str) -> str:
        net = self.network
        hop1 = set(net.accounts[aid].follows)
        hop1.update(net.followers_of(aid))
        reach = set(hop1)
        for n in hop1:
            reach.update(net.accounts[n].follows)
            reach.update(net.followers_of(n))
        reach.discard(aid)
        new = self._reveal(sorted(r for r in reach if r not in self._visible_set))
        if aid not in self._investigated:
            self._investigated.append(aid)
        return (
            f"Investigated the network around {aid}: {len(reach)} accounts within 2 hops, "
            f"{new} newly visible."
        )

    def _flag(self, aid: str) -> str:
        net = self.network
        self._flagged.append(aid)
        flagged = set(self._flagged)
        before = len(self._suspect_marks)
        for f in net.accounts[aid].follows:
            if f in self._visible_set and f not in flagged:
                self._suspect_marks.add(f)
        ip = net.accounts[aid].ip_cluster_id
        for v in self._visible:
            if v not in flagged and net.accounts[v].ip_cluster_id == ip:
                self._suspect_marks.add(v)
        added = len(self._suspect_marks) - before
        return f"Flagged {aid} as a suspected ring member; {added} accounts newly marked suspect."

    def _add_reward(self, r: float) -> None:
        self._reward = round(r, 4)
        self._return = round(self._return + r, 4)

    def _finish(self, cost: float, *, forced: bool) -> None:
        spec = self.task_spec
        out = scoring.outcome(self._flagged, self._gang)
        term = scoring.terminal_reward(
            spec, out, forced=forced, steps_remaining=self.steps_remaining
        )
        self._add_reward(cost + term)
        self._done = True
        self._terminal = {
            "score": scoring.grader_score(spec, out, steps_remaining=self.steps_remaining),
            "won": scoring.won(spec, out),
            "tp": out.tp,
            "fp": out.fp,
            "fn": out.fn,
            "recall": out.recall,
            "precision": out.precision,
            "forced": forced,
        }
        self._message = scoring.terminal_message(spec, out, self._return)
        if self.operator is not None:
            report, self.operator_next = after_round(self.operator, self.network, self._flagged)
            token = self._seal(self.operator_next) if self._seal is not None else None
            self._operator_debrief = {**report.to_dict(), "next_token": token}

    # -- evasion --------------------------------------------------------------------------------
    def _maybe_evade(self) -> str:
        schedule = self.task_spec.evasion_steps
        msg = ""
        while self._evasion_count < len(schedule) and (
            self._step_count >= schedule[self._evasion_count]
        ):
            self._evasion_count += 1
            self._evade(self._evasion_count)
            msg = (
                f" The ring adapted (evasion {self._evasion_count}): follows, posting hours, "
                "IPs and names may have changed; earlier profiles are stale until re-inspected."
            )
        return msg

    def _evade(self, k: int) -> None:
        """Drop intra-ring follows, shift posting hours together, rotate IPs, rename members."""
        net = self.network
        p = self._evasion
        rng = random.Random(f"{self.task}:{self.seed}:evasion:{k}")
        gang = net.gang_ids
        if not gang:
            return
        intra = [(g, h) for g in gang for h in net.accounts[g].follows if h in self._gang]
        dropped = [e for e in intra if rng.random() < p.evasion_drop]
        if not dropped and intra:
            dropped = [rng.choice(intra)]
        for g, h in dropped:
            net.remove_follow(g, h)
        lo, hi = p.evasion_hour_shift
        delta = rng.uniform(lo, hi) * rng.choice((-1.0, 1.0))
        for g in gang:
            acc = net.accounts[g]
            acc.avg_post_hour = round((acc.avg_post_hour + delta + rng.gauss(0, 0.15)) % 24.0, 2)
        exits = sorted({a.ip_cluster_id for a in net.accounts.values() if a.role == "vpn_user"})
        targets = rng.sample(exits, min(2, len(exits)))
        movers = [g for g in gang if rng.random() < p.evasion_rotate] or [rng.choice(gang)]
        for g in movers if targets else ():
            choices = [t for t in targets if t != net.accounts[g].ip_cluster_id] or targets
            net.set_ip(g, rng.choice(choices))
        renamed = [g for g in gang if rng.random() < p.evasion_rename] or [rng.choice(gang)]
        for g in renamed:
            net.accounts[g].name_change_count += 1
        if net.traces is not None:  # no RNG draw: classic evasion stays bit for bit
            net.traces.evade(net, k)
