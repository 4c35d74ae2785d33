"""httpx client for the fakegang environment server (per-episode HTTP sessions).

Speaks the server's episode-addressed routes: `/reset` returns an `episode_id`, `/step` carries it
with the `action_index` that makes a retried step idempotent, `/state` and `/grader` read it back.
Observations are parsed into the environment's own wire model (`PlainObservation`), which needs no
OpenEnv import.
"""

from __future__ import annotations

import os
import time
from typing import Any

import httpx

from fakegang_env.schema import TOKEN_ENV, PlainObservation

RETRYABLE = (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError, httpx.ReadTimeout)


def env_token() -> str | None:
    """The bearer token of a server started with one (`$FAKEGANG_ENV_TOKEN`), or None."""
    return os.environ.get(TOKEN_ENV) or None


class EnvError(RuntimeError):
    """The environment answered with an error (status code and the server's own message)."""

    def __init__(self, status: int, detail: Any, route: str) -> None:
        self.status = status
        self.detail = detail
        hint = ""
        if status == 401:
            hint = f" (the server needs its token: set ${TOKEN_ENV} to it)"
        super().__init__(f"environment {route} failed with HTTP {status}: {detail}{hint}")


def parse_observation(payload: dict) -> PlainObservation:
    """Turn an OpenEnv wire response {"observation", "reward", "done"} into one model.

    OpenEnv >= 0.10 also nests its (always empty here) `metadata` in the observation; drop it.
    """
    fields = {k: v for k, v in payload["observation"].items() if k != "metadata"}
    return PlainObservation(**fields, reward=payload.get("reward"), done=payload.get("done", False))


class EnvClient:
    """Blocking client; one instance can drive many episodes (each addressed by its id)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 30.0,
        retries: int = 3,
        token: str | None = None,
    ) -> None:
        """`token` (default `$FAKEGANG_ENV_TOKEN`) is sent as `Authorization: Bearer`."""
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        token = token or env_token()
        headers = {"Authorization": f"Bearer {token}"} if token else None
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout_s, headers=headers)

    def _request(self, method: str, route: str, **kwargs: Any) -> dict:
        for attempt in range(self.retries + 1):
            try:
                resp = self._http.request(method, route, **kwargs)
            except RETRYABLE:
                if attempt == self.retries:
                    raise
                time.sleep(0.2 * 2**attempt)
                continue
            if resp.status_code >= 400:
                try:
                    detail = resp.json()
                except ValueError:
                    detail = resp.text
                raise EnvError(resp.status_code, detail, route)
            return resp.json()
        raise AssertionError("unreachable")

    def health(self) -> bool:
        try:
            return self._request("GET", "/health").get("status") == "healthy"
        except (httpx.HTTPError, EnvError):
            return False

    def probe(self, route: str = "/tasks") -> int:
        """The HTTP status of one GET (no retry, no raise on 4xx): 401 means a wrong token."""
        return self._http.get(route).status_code

    def tasks(self) -> dict:
        return self._request("GET", "/tasks")

    def reset(
        self,
        task: str,
        seed: int | None,
        episode_id: str | None = None,
        *,
        tactics: str | None = None,
        campaign: int | None = None,
        round: int | None = None,
        operator_token: str | None = None,
    ) -> PlainObservation:
        """Start an episode. With `campaign` and `round` the server derives the seed (and the
        hidden playbook of that round), so `seed` is not sent; an adaptive round from round 1 on
        sends the previous round's `operator_token`."""
        body: dict[str, Any] = {"task": task}
        if campaign is not None or round is not None:
            body.update(campaign=campaign, round=round)
        elif seed is not None:
            body["seed"] = seed
        if operator_token is not None:
            body["operator_token"] = operator_token
        if tactics is not None:
            body["tactics"] = tactics
        if episode_id:
            body["episode_id"] = episode_id
        return parse_observation(self._request("POST", "/reset", json=body))

    def step_raw(
        self,
        episode_id: str,
        action_type: str,
        account_id: str | None,
        action_index: int,
        trace: str | None = None,
    ) -> dict:
        """Send one action (`trace` for a pivot); a retry with the same `action_index` is
        answered, not re-applied."""
        action: dict[str, Any] = {"action_type": action_type}
        if account_id is not None:
            action["account_id"] = account_id
        if trace is not None:
            action["trace"] = trace
        body = {"action": action, "episode_id": episode_id, "action_index": action_index}
        return self._request("POST", "/step", json=body)

    def step(
        self,
        episode_id: str,
        action_type: str,
        account_id: str | None,
        action_index: int,
        trace: str | None = None,
    ) -> PlainObservation:
        return parse_observation(
            self.step_raw(episode_id, action_type, account_id, action_index, trace)
        )

    def state(self, episode_id: str) -> dict:
        return self._request("GET", "/state", params={"episode_id": episode_id})

    def grader(self, episode_id: str) -> dict:
        return self._request("GET", "/grader", params={"episode_id": episode_id})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: The reset keywords an episode's input may carry besides task and seed.
RESET_OPTIONS: tuple[str, ...] = ("tactics", "campaign", "round", "operator_token")


def reset_options(state: dict[str, Any]) -> dict[str, Any]:
    """The optional reset keywords (`tactics`, `campaign`, `round`, `operator_token`) an episode
    state carries."""
    return {k: state[k] for k in RESET_OPTIONS if state.get(k) is not None}
