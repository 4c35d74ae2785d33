"""The agent's httpx client against the environment server started as a real process."""

from __future__ import annotations

import httpx
import pytest
from env_fixtures import ServerProcess, free_port

from fakegang.tools.env_client import EnvClient, EnvError
from fakegang_env.engine import Episode


@pytest.fixture(scope="module")
def server():
    port = free_port()
    with ServerProcess(["-m", "fakegang_env.cli", "env", "serve", "--port", str(port)], port) as s:
        yield s


def test_reset_step_state_grader_match_in_process_play(server) -> None:
    client = EnvClient(server.base_url)
    obs = client.reset("easy", 4, episode_id="client-test-1")
    local = Episode("easy", 4)
    assert obs.episode_id == "client-test-1"
    assert obs.visible_account_ids == local.observation()["visible_account_ids"]
    target = obs.visible_account_ids[0]
    after = client.step("client-test-1", "inspect", target, 0)
    expected = local.step("inspect", target)
    assert after.model_dump(exclude={"episode_id"}) == {
        k: v for k, v in expected.items() if k != "episode_id"
    }
    assert client.state("client-test-1")["action_count"] == 1
    with pytest.raises(EnvError) as not_done:
        client.grader("client-test-1")
    assert 400 <= not_done.value.status < 500
    final = client.step("client-test-1", "submit", None, 1)
    assert final.done and final.grader_score is not None
    assert client.grader("client-test-1")["score"] == pytest.approx(final.grader_score)
    assert {t["name"] for t in client.tasks()["tasks"]} == {"easy", "medium", "hard"}


def test_a_retried_step_is_answered_not_reapplied(server) -> None:
    client = EnvClient(server.base_url)
    obs = client.reset("medium", 1, episode_id="client-test-2")
    target = obs.visible_account_ids[0]
    first = client.step("client-test-2", "inspect", target, 0)
    retry = client.step("client-test-2", "inspect", target, 0)
    assert retry == first
    assert client.state("client-test-2")["step_count"] == 1


def test_errors_are_clear(server) -> None:
    client = EnvClient(server.base_url)
    client.reset("easy", 0, episode_id="client-test-3")
    with pytest.raises(EnvError) as skipped:
        client.step("client-test-3", "submit", None, 5)  # out of order
    assert skipped.value.status == 409
    assert "action" in str(skipped.value).lower()
    with pytest.raises(EnvError) as unknown:
        client.step("no-such-episode", "submit", None, 0)
    assert unknown.value.status == 404
    with pytest.raises(EnvError) as bad_task:
        client.reset("impossible", 0)
    assert bad_task.value.status == 422 or bad_task.value.status == 400
    assert "easy" in str(bad_task.value)


def test_unreachable_server_raises_after_bounded_retries() -> None:
    client = EnvClient(f"http://127.0.0.1:{free_port()}", retries=1)
    with pytest.raises(httpx.ConnectError):
        client.reset("easy", 0)
