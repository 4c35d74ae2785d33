"""Play an episode with the rule engine alone, in-process (no server, no graph, no LLM).

Used to fit the rule weights and to measure the rules-only agent quickly; the real agent plays
through the graph and the HTTP server with exactly the same `propose` function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fakegang.tools.rules.actions import parse_step
from fakegang.tools.rules.engine import Proposal, propose, score_observation
from fakegang_env.engine import Episode
from fakegang_env.schema import PlainObservation
from fakegang_env.tactics import Playbook
from fakegang_env.tasks import get_task

Hook = Callable[[Episode, PlainObservation, list[str], Proposal], None]
#: Scores a case in place of the engine's own models: (likelihood, frontier), as `propose` takes.
Scorer = Callable[[Episode, PlainObservation, list[str]], tuple[dict, dict]]


def play_rules(
    task: str,
    seed: int,
    on_step: Hook | None = None,
    *,
    early_submit: bool = True,
    tactics: str | Playbook = "classic",
    scorer: Scorer | None = None,
    pivot_yields: Mapping[str, float] | None = None,
) -> dict:
    """Play one episode; `on_step` sees every decision (used to collect training data).
    `tactics` is the ring's playbook (a name or a `Playbook`), as `Episode` takes it; `scorer`
    replaces the engine's scoring (bench/fits/fit_tactics_model.py explores with the truth);
    `pivot_yields` lets the engine pivot as the graph does (None: it never pivots, the policy
    the shipped weights were fitted on)."""
    episode = Episode(task, seed, tactics=tactics)
    return play_episode(
        episode, on_step, early_submit=early_submit, scorer=scorer, pivot_yields=pivot_yields
    )


def play_episode(
    episode: Episode,
    on_step: Hook | None = None,
    *,
    early_submit: bool = True,
    scorer: Scorer | None = None,
    pivot_yields: Mapping[str, float] | None = None,
) -> dict:
    """`play_rules` on an episode already built (a campaign round, `Episode.for_round`)."""
    task, seed = episode.task, episode.seed
    obs = PlainObservation(**episode.observation())
    starting = list(obs.visible_account_ids)
    flags: list[tuple[float, float, bool]] = []  # (confidence, raw evidence score, truly gang)
    max_actions = get_task(task).max_steps * 3
    unflagged: set[str] = set()
    hypotheses: list[tuple[str, int]] = []
    n = 0
    while not obs.done:
        if scorer is not None:
            scores = scorer(episode, obs, starting)
        else:
            scores = score_observation(obs, starting, None, pivot_yields)
        proposal = (
            propose(
                obs,
                starting,
                scores,
                early_submit=early_submit,
                unflagged=unflagged,
                pivot_yields=pivot_yields,
                hypotheses=hypotheses,
            )
            if n < max_actions
            else Proposal("submit", 1.0, "cap")
        )
        if on_step is not None:
            on_step(episode, obs, starting, proposal)
        action_type, account_id, trace = parse_step(proposal.action)
        if action_type == "flag":
            flags.append(
                (
                    proposal.confidence,
                    proposal.likelihood[account_id],
                    account_id in set(episode.network.gang_ids),
                )
            )
        if action_type == "unflag" and account_id:
            unflagged.add(account_id)
        if proposal.hypothesis and account_id:
            hypotheses.append((account_id, obs.step_count))
        obs = PlainObservation(**episode.step(action_type, account_id, trace))
        n += 1
    return {
        "task": task,
        "seed": seed,
        "won": obs.message.startswith("[WIN]"),
        "grader_score": obs.grader_score,
        "steps_used": obs.step_count,
        "reward": obs.episode_return,
        "message": obs.message,
        "flags": flags,
        "observation": obs,
        "starting_ids": starting,
    }
