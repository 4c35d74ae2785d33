"""An episode held by this process's environment server, truth included, for in-process oracles.

Only code in the same process as the server (the embedded server of `fakegang train`, campaigns,
tests) can reach it; nothing of it crosses the wire. The `expert:P` stand-in model reads the ring
through this hook rather than through the server's internals, so the server may change freely.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakegang_env.engine import Episode


class EpisodeNotServedHere(LookupError):
    """No server in this process holds that episode (or no server runs in this process)."""


def served_episode(episode_id: str) -> Episode:
    """The engine episode `episode_id` of the environment server running in this process."""
    from fakegang_env.server.app import app

    registry = getattr(app.state, "registry", None)
    if registry is None:
        raise EpisodeNotServedHere("no environment server runs in this process")
    try:
        return registry.get(episode_id).episode
    except LookupError as exc:
        raise EpisodeNotServedHere(f"no episode {episode_id!r} in this process's server") from exc
