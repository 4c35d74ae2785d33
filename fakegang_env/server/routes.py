"""Our HTTP routes: stateful `/reset`, `/step`, `/state` addressed by `episode_id`, plus
`/tasks` and `/grader`.

Why these replace OpenEnv's stock `/reset`, `/step` and `/state`: the stock handlers are
stateless. Each request builds a brand-new environment from the factory, calls one method and
closes it, so a `/step` never sees the episode a `/reset` started (only the `/ws` route keeps an
environment per connection). Our agent and other plain-HTTP clients need many concurrent,
stateful episodes, so these routes keep episodes in an `EpisodeRegistry` keyed by `episode_id`.

They keep OpenEnv's exact wire shapes: `/reset` takes the flat body (`seed`, `episode_id`, plus
our `task`), `/step` takes `{"action": {...}}` (plus our `episode_id` and `action_index`), and
both answer `{"observation": {...}, "reward": r, "done": d}` with `reward`/`done` lifted out of
the observation and `metadata` kept inside it, as `openenv...serialization.serialize_observation`
does. We do not call that helper per step: it needs an `Observation` model, and validating and
dumping a hard observation (~1000 ids) through pydantic on every step costs more than the step;
the engine already returns a JSON-ready dict, which is encoded once (orjson when available).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from fastapi import Body, FastAPI, Query
from fastapi.responses import Response
from openenv.core.env_server.types import ResetResponse, StepResponse

from fakegang_env.operator_token import OperatorTokenError
from fakegang_env.server.catalog import tasks_catalog
from fakegang_env.server.contract import error_response
from fakegang_env.server.errors import ApiError
from fakegang_env.server.requests import (
    EPISODE_ID_QUERY_PATTERN,
    EPISODE_ID_RULE,
    EpisodeSpec,
    ResetConflict,
    ResetParams,
    StepBody,
)
from fakegang_env.server.rounds import OperatorKeyError, reset_spec
from fakegang_env.server.sessions import (
    ActionIndexConflict,
    EpisodeNotFoundError,
    EpisodeRegistry,
    HeldEpisode,
    RegistryFullError,
)

try:
    import orjson

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

except ImportError:  # pragma: no cover - orjson ships with openenv's gradio dependency

    def dumps(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()


#: (task, spec, episode_id) -> an engine Episode
EpisodeFactory = Callable[[str, EpisodeSpec, str], Any]
_LIFTED = ("done", "reward")
_JSON = "application/json"


def wire_body(obs: dict[str, Any]) -> bytes:
    """OpenEnv's reset/step response for an engine observation dict, encoded."""
    observation = {k: v for k, v in obs.items() if k not in _LIFTED}
    observation["metadata"] = {}
    return dumps(
        {
            "observation": observation,
            "reward": obs.get("reward"),
            "done": bool(obs.get("done", False)),
        }
    )


def _error_doc(description: str) -> dict[str, Any]:
    return error_response(description)


def _lookup(registry: EpisodeRegistry, episode_id: str | None) -> HeldEpisode:
    try:
        return registry.get(episode_id)
    except EpisodeNotFoundError as exc:
        raise ApiError(404, "unknown_episode", str(exc.args[0])) from None


def register_http_routes(
    app: FastAPI, registry: EpisodeRegistry, episode_factory: EpisodeFactory
) -> None:
    """Add the stateful episode routes and `/tasks`, `/grader` to `app`."""
    catalog_body = dumps(tasks_catalog())

    @app.post(
        "/reset",
        tags=["Environment Control"],
        summary="Start an episode (stateful; addressed by episode_id)",
        response_model=None,
        responses={
            200: {
                "model": ResetResponse,
                "description": "First observation; observation.episode_id addresses the episode",
            },
            400: _error_doc(
                "Conflicting options (seed with campaign, round without campaign, an adaptive "
                "round without its operator_token)"
            ),
            403: _error_doc(
                "An operator_token that does not verify: edited, forged, or issued by a server "
                "with another key"
            ),
            409: _error_doc("An operator_token from another round, campaign or task"),
            422: _error_doc(
                "Unknown task or tactics (the valid values are listed), negative seed, "
                "campaign or round, bad episode_id, wrong types"
            ),
            503: _error_doc(
                "Every slot holds an unfinished episode, or the server cannot use its "
                "operator key (adaptive rounds)"
            ),
        },
    )
    def reset(params: ResetParams = Body(default_factory=ResetParams)) -> Response:  # noqa: B008
        """Start (or restart) an episode. Without `episode_id` a uuid4 is generated and the
        episode becomes the default one used by requests that name no episode. `tactics`
        picks the ring's playbook; `campaign` + `round` derive the seed and the playbook of a
        campaign round (the playbook is never revealed). `tactics=adaptive` rounds take the
        previous round's `operator_token` and reveal the operator in the terminal observation."""
        try:
            spec = reset_spec(params)
        except ResetConflict as exc:
            raise ApiError(400, "conflicting_options", str(exc)) from None
        except OperatorTokenError as exc:
            raise ApiError(exc.status, exc.error, exc.message) from None
        except OperatorKeyError as exc:
            raise ApiError(503, "operator_key_unavailable", str(exc)) from None
        episode_id = params.episode_id or str(uuid.uuid4())
        try:
            registry.ensure_room(episode_id)
            episode = episode_factory(params.task, spec, episode_id)
            held = registry.put(episode_id, episode, make_default=params.episode_id is None)
        except RegistryFullError as exc:
            raise ApiError(
                503, "too_many_episodes", str(exc), max_episodes=registry.max_episodes
            ) from None
        except OperatorKeyError as exc:
            raise ApiError(503, "operator_key_unavailable", str(exc)) from None
        with held.lock:
            body = wire_body(held.episode.observation())
        return Response(body, media_type=_JSON)

    @app.post(
        "/step",
        tags=["Environment Control"],
        summary="Apply one action to an episode",
        response_model=None,
        responses={
            200: {
                "model": StepResponse,
                "description": "Observation after the action "
                "(illegal but well-formed actions are 200 with last_action_error)",
            },
            404: _error_doc("Unknown, expired or evicted episode_id"),
            409: _error_doc("action_index is neither the next action nor a replay"),
            422: _error_doc("Malformed action (unknown action_type, wrong types, extra keys)"),
        },
    )
    async def step(body: StepBody) -> Response:
        """Apply `action` to the episode `episode_id` (default episode when absent). With
        `action_index` (= action_count before the action) retries are safe: repeating the last
        applied index returns the stored response and applies nothing."""
        held = _lookup(registry, body.episode_id)
        try:
            payload, replayed = held.apply(
                body.action.action_type.value,
                body.action.account_id,
                body.action_index,
                wire_body,
                trace=body.action.trace,
            )
        except ActionIndexConflict as exc:
            raise ApiError(
                409,
                "action_index_conflict",
                str(exc),
                expected_action_index=exc.expected,
                received_action_index=exc.received,
                last_applied_action_index=exc.last_applied,
            ) from None
        headers = {"X-Fakegang-Replayed": "true"} if replayed else None
        return Response(payload, media_type=_JSON, headers=headers)

    @app.get(
        "/state",
        tags=["State Management"],
        summary="Episode bookkeeping (FakeGangState)",
        response_model=None,
        responses={404: _error_doc("Unknown episode_id, or no default episode yet")},
    )
    async def state(
        episode_id: str | None = Query(  # noqa: B008
            default=None,
            pattern=EPISODE_ID_QUERY_PATTERN,
            description=f"Episode id ({EPISODE_ID_RULE}); the default episode when absent",
        ),
    ) -> Response:
        held = _lookup(registry, episode_id)
        with held.lock:
            return Response(dumps(held.episode.state()), media_type=_JSON)

    @app.get(
        "/grader",
        tags=["State Management"],
        summary="Grader result of a finished episode",
        response_model=None,
        responses={
            404: _error_doc("Unknown episode_id, or no default episode yet"),
            409: _error_doc("The episode has not finished"),
        },
    )
    async def grader(
        episode_id: str | None = Query(  # noqa: B008
            default=None,
            pattern=EPISODE_ID_QUERY_PATTERN,
            description=f"Episode id ({EPISODE_ID_RULE}); the default episode when absent",
        ),
    ) -> Response:
        held = _lookup(registry, episode_id)
        with held.lock:
            result = held.episode.grader()
            if result is None:
                st = held.episode.state()
                raise ApiError(
                    409,
                    "episode_not_finished",
                    f"episode {held.episode_id!r} has not finished: submit first (or use up "
                    f"the budget); {st.get('steps_remaining')} steps remain",
                )
            return Response(dumps(result), media_type=_JSON)

    @app.get(
        "/tasks",
        tags=["Environment Info"],
        summary="Tasks, budgets, win rules, actions",
        response_model=None,
    )
    async def tasks() -> Response:
        return Response(catalog_body, media_type=_JSON)
