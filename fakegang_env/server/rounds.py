"""How a reset becomes an episode: a seed under a playbook, or an adaptive campaign round whose
operator state came in a token and whose debrief carries the next one.

Both the HTTP routes and the WebSocket environment build episodes here, so both read the same
key (fakegang_env/operator_token.py) and seal the same tokens.
"""

from __future__ import annotations

from functools import cache, partial
from pathlib import Path

from fakegang_env.engine import Episode
from fakegang_env.operator_token import KEY_FILE_ENV, key_path, seal, server_key
from fakegang_env.server.requests import EpisodeSpec, ResetParams

__all__ = ["OperatorKeyError", "new_episode", "operator_key", "reset_spec"]


class OperatorKeyError(RuntimeError):
    """The server cannot read or make its operator key (HTTP 503: the server's fault)."""


@cache
def _key_at(path: str) -> bytes:
    try:
        return server_key(Path(path))
    except (OSError, ValueError) as exc:
        raise OperatorKeyError(
            f"the server cannot use its operator key {path} ({exc}); set "
            f"${KEY_FILE_ENV} to a writable file"
        ) from None


def operator_key() -> bytes:
    """The server's operator key (read once per key file)."""
    return _key_at(str(key_path()))


def reset_spec(params: ResetParams) -> EpisodeSpec:
    """The reset's episode spec; the key is read only when an adaptive token must be opened."""
    needs_key = params.operator_token is not None
    return params.episode_spec(operator_key() if needs_key else None)


def new_episode(task: str, spec: EpisodeSpec, episode_id: str) -> Episode:
    """The episode a reset plays (an adaptive round seals its operator's next state)."""
    if spec.operator is None:
        return Episode(task, spec.seed, episode_id=episode_id, tactics=spec.playbook)
    return Episode.for_adaptive_round(
        spec.operator, episode_id, seal=partial(seal, key=operator_key())
    )
