"""The OpenAPI document as the truth: every status a route can answer, with its JSON body.

FastAPI documents what a route declares (its models, its `responses=`), not what the layers
around it answer: our error handlers turn malformed JSON into 400 and validation errors into 422
with our own body shape (`errors.py`), the body-size middleware answers 413 on any route, the
last-resort handler answers 500, and the token middleware 401 (`auth.py`). This module adds those
answers to every operation from what the operation is (does it take a body, parameters, is it
open without a token), never from a list of today's fields: fields, their ranges and enums come
from the pydantic models, so a field added to a request model is in the contract at once.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field

from fakegang_env.server.auth import OPEN_PATHS

_JSON = "application/json"
_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")


class ErrorBody(BaseModel):
    """Every 4xx/5xx answer of the server: a short code, a sentence, and route-specific extras
    (e.g. `max_episodes` on 503, `expected_action_index` on 409, `detail` on 400/422)."""

    model_config = ConfigDict(extra="allow")

    error: str = Field(description="Short machine-readable code, e.g. unknown_episode")
    message: str = Field(description="What went wrong and what to do, for a person")


def error_response(description: str) -> dict[str, Any]:
    """A `responses=` entry for routes that raise `ApiError` with this status."""
    return {"model": ErrorBody, "description": description}


# status -> (description, applies to): "all" operations, "body" (has a request body),
# "input" (has a body or parameters), "path" (has a path parameter), "task_api" (OpenEnv's
# Task API routes, tag "Task API"), "secured" (needs the token when one is set).
_LAYER_ANSWERS: dict[str, tuple[str, str]] = {
    "400": ("Malformed JSON body (error malformed_json)", "body"),
    "401": ("Missing or wrong bearer token (only when the server runs with a token)", "secured"),
    "413": ("Request body larger than the server's limit (error body_too_large)", "all"),
    "415": (
        "Request body not declared Content-Type: application/json (error "
        "unsupported_media_type; security.py)",
        "post",
    ),
    "422": (
        "A field is missing, of the wrong type or out of range (error invalid_request, "
        "per-field list in detail)",
        "input",
    ),
    "404": ("No such resource for this path parameter (e.g. an unknown environment name)", "path"),
    "501": ("OpenEnv Task API method this environment does not provide", "task_api"),
    "500": ("A bug in the server (error internal_error); the traceback is in its log", "all"),
}


def _applies(scope: str, op: dict[str, Any], path: str, secured: bool) -> bool:
    if scope == "all":
        return True
    if scope == "path":
        return any(p.get("in") == "path" for p in op.get("parameters", ()))
    if scope == "task_api":
        return "Task API" in op.get("tags", ())
    if scope == "body":
        return "requestBody" in op
    if scope == "post":
        return op.get("_method") == "post"
    if scope == "input":
        return "requestBody" in op or bool(op.get("parameters"))
    return secured and path not in OPEN_PATHS


def _is_fastapi_validation(content: dict[str, Any]) -> bool:
    ref = content.get(_JSON, {}).get("schema", {}).get("$ref", "")
    return ref.rsplit("/", 1)[-1] in _FASTAPI_VALIDATION


def complete_operation(op: dict[str, Any], path: str, secured: bool) -> None:
    """Add the layer answers to one operation; our error shape replaces FastAPI's 422 one."""
    responses = op.setdefault("responses", {})
    for status, (description, scope) in _LAYER_ANSWERS.items():
        if not _applies(scope, op, path, secured):
            continue
        existing = responses.get(status)
        if existing is None or _is_fastapi_validation(existing.get("content", {})):
            responses[status] = {
                "description": description,
                "content": {_JSON: {"schema": _ERROR_REF}},
            }
    if secured and path not in OPEN_PATHS:
        op["security"] = [{"bearerAuth": []}]


#: Where episodes come from: the answer of `POST /reset` names the new episode.
EPISODE_SOURCE = ("/reset", "post", "$response.body#/observation/episode_id")


def _takes_episode_id(op: dict[str, Any], schemas: dict[str, Any]) -> str | None:
    """ "query" or "body" when the operation addresses an episode by `episode_id`."""
    if any(
        p.get("name") == "episode_id" and p.get("in") == "query" for p in op.get("parameters", ())
    ):
        return "query"
    ref = op.get("requestBody", {}).get("content", {}).get(_JSON, {}).get("schema", {}).get("$ref")
    if ref and "episode_id" in schemas.get(ref.rsplit("/", 1)[-1], {}).get("properties", {}):
        return "body"
    return None


def add_episode_links(schema: dict[str, Any]) -> None:
    """OpenAPI links from the episode source to every operation that takes `episode_id`, so
    stateful tests (Schemathesis) and generated clients chain reset -> step/state/grader."""
    path, method, expression = EPISODE_SOURCE
    source = schema.get("paths", {}).get(path, {}).get(method)
    if source is None:
        return
    schemas = schema.get("components", {}).get("schemas", {})
    links: dict[str, Any] = {}
    for target_path, operations in schema["paths"].items():
        for target_method, op in operations.items():
            where = _takes_episode_id(op, schemas)
            if where is None or (target_path, target_method) == (path, method):
                continue
            name = op.get("operationId") or f"{target_method}{target_path}"
            link: dict[str, Any] = {"operationId": op["operationId"]}
            if where == "query":
                link["parameters"] = {"episode_id": expression}
            else:
                link["requestBody"] = {"episode_id": expression}
            links[name] = link
    if links:
        source["responses"]["200"]["links"] = links


def build_contract(app: FastAPI, *, secured: bool) -> dict[str, Any]:
    """The app's OpenAPI document with every answer documented (see the module docstring)."""
    schema = get_openapi(
        title=app.title,
        version=app.version,
        openapi_version=app.openapi_version,
        description=app.description,
        routes=app.routes,
    )
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["ErrorBody"] = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    for path, operations in schema.get("paths", {}).items():
        for method, op in operations.items():
            if method == "post":  # security.py: every POST carries a JSON body
                body = op.setdefault("requestBody", {"content": {_JSON: {"schema": {}}}})
                body["required"] = True
            op["_method"] = method
            complete_operation(op, path, secured)
            del op["_method"]
    add_episode_links(schema)
    if secured:
        components["securitySchemes"] = {
            "bearerAuth": {"type": "http", "scheme": "bearer", "description": "--token"}
        }
    for name in _FASTAPI_VALIDATION:  # no answer uses FastAPI's own 422 shape any more
        schemas.pop(name, None)
    return schema


def install_contract(app: FastAPI, *, secured: bool) -> None:
    """Serve `build_contract` at `/openapi.json` (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build_contract(app, secured=secured)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
