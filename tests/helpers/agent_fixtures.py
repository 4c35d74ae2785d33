"""Hand-built observations for rule-engine and node tests."""

from __future__ import annotations

from fakegang_env.engine import Episode
from fakegang_env.schema import AccountProfile, PlainObservation


def profile(account_id: str, follows: list[str], **overrides) -> AccountProfile:
    base = dict(
        account_id=account_id,
        follower_count=300,
        following_count=250,
        post_count=120,
        avg_post_hour=9.0,
        account_age_days=1500,
        photo_reuse_score=0.08,
        bio_template_score=0.07,
        comment_repeat_score=0.05,
        ip_cluster_id=f"ip_{account_id}",
        shared_ip_count=0,
        name_change_count=0,
        mutual_follow_rate=0.2,
        visible_follows=follows,
        inspected_at_step=0,
    )
    base.update(overrides)
    return AccountProfile(**base)


def ring_member(account_id: str, follows: list[str], **overrides) -> AccountProfile:
    """A profile with the ring's lockstep traits (age ~90 days, posting at 3am, proxy IP)."""
    traits = dict(
        account_age_days=90,
        avg_post_hour=3.0,
        photo_reuse_score=0.45,
        bio_template_score=0.42,
        comment_repeat_score=0.40,
        ip_cluster_id="ip_proxy",
        shared_ip_count=4,
        mutual_follow_rate=0.7,
    )
    traits.update(overrides)
    return profile(account_id, follows, **traits)


def observation(
    profiles: list[AccountProfile],
    *,
    visible: list[str],
    flagged: list[str] = (),
    task: str = "medium",
    steps_remaining: int = 30,
    max_steps: int = 50,
) -> PlainObservation:
    return PlainObservation(
        task=task,
        max_steps=max_steps,
        steps_remaining=steps_remaining,
        step_count=max_steps - steps_remaining,
        action_count=max_steps - steps_remaining + len(flagged),
        visible_account_ids=list(visible),
        inspected_ids=[p.account_id for p in profiles],
        flagged_ids=list(flagged),
        visible_accounts=profiles,
        graph_edges={p.account_id: list(p.visible_follows) for p in profiles},
    )


def finished_rules_episode(
    task: str, seed: int, tactics: str = "classic"
) -> tuple[PlainObservation, list]:
    """A rules-only episode's terminal observation (with its debrief) and starting ids."""
    ep = Episode(task, seed, tactics=tactics)
    starting = list(ep.observation()["visible_account_ids"])
    from fakegang.tools.rules.actions import parse_action
    from fakegang.tools.rules.engine import propose

    obs = PlainObservation(**ep.observation())
    while not obs.done:
        kind, account = parse_action(propose(obs, starting).action)
        obs = PlainObservation(**ep.step(kind, account))
    return obs, starting
