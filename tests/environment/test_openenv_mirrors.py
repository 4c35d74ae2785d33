"""Our own tests of the checks OpenEnv's validator runs only on a built image (no Docker daemon
here), each named after the check id it mirrors (RFC 008). All run over `/ws`, the transport
the validator uses, against our app on 127.0.0.1; the manifest's declarations are read from
`fakegang_env/openenv.yaml` so a change there is checked here.

Other mirrors live beside the code they test: `runtime.episode_isolation` also in
tests/environment/test_server_ws.py (concurrent sessions), the wire checks in
tests/environment/test_openenv_bar.py.
"""

from __future__ import annotations

import json

import pytest
import yaml
from env_fixtures import ThreadedServer

from fakegang_env.engine import Episode
from fakegang_env.policies import RandomPolicy, play_recorded
from fakegang_env.server.app import ServerSettings, build_app
from fakegang_env.tasks import TASK_NAMES
from fakegang_env.traces import TRACES
from fakegang_env.validation import canaries
from fakegang_env.validation.oracle import MANIFEST, declared_reward, play_oracle
from fakegang_env.validation.wire import WsSession, action_dict

REWARD = declared_reward()
TOP = REWARD["range"][1]


@pytest.fixture(scope="module")
def base_url():
    with ThreadedServer(build_app(ServerSettings(max_ws_sessions=8))) as url:
        yield url


def transcript(url: str, task: str, seed: int, actions: list[dict], mode: str = "grader"):
    """Every observation envelope and state of one episode, minus the episode id."""
    with WsSession(url) as ws:
        frames = [ws.reset(task=task, seed=seed, reward_mode=mode)]
        states = [ws.state()]
        for action in actions:
            frames.append(ws.step(action))
            states.append(ws.state())
    for frame in frames:
        frame["observation"].pop("episode_id")
    for state in states:
        state.pop("episode_id")
    return frames, states


def test_semantic_oracle_max(base_url: str) -> None:
    """semantic.oracle_max: the declared oracle script reaches the top within the tolerance."""
    for task in TASK_NAMES:
        for seed in (0, 1, 2):
            row = play_oracle(base_url, task, seed)
            assert row["reward"] >= TOP - REWARD["oracle_tolerance"], row
        row = play_oracle(base_url, task, 0, pivots=True)  # the script's pivoting variant
        assert row["reward"] >= TOP - REWARD["oracle_tolerance"], row


def test_semantic_oracle_max_on_more_seeds_in_process() -> None:
    """The same bound on seeds 0-9 of every task (engine grader = the served terminal reward)."""
    from fakegang_env.validation.canaries import STRATEGIES

    for task in TASK_NAMES:
        for seed in range(10):
            episode = Episode(task, seed)
            STRATEGIES["oracle"](episode)
            assert episode.grader()["score"] >= TOP - REWARD["oracle_tolerance"], (task, seed)


def test_semantic_floor_gap(base_url: str) -> None:
    """semantic.floor_gap: the do-nothing floor (submit at once) sits the margin below the top;
    reset carries no reward; random play stays below the top by the margin too."""
    for task in TASK_NAMES:
        frames, _ = transcript(base_url, task, 3, [{"action_type": "submit"}])
        assert frames[0]["reward"] is None
        floor = frames[1]["reward"]
        assert floor == 0.0 and TOP - floor >= REWARD["floor_margin"]
        for seed in range(3):
            episode, policy = Episode(task, seed), RandomPolicy(seed)
            obs = episode.observation()
            while not episode.done:
                obs = episode.step(*policy.act(obs))
            assert episode.grader()["score"] <= TOP - REWARD["floor_margin"], (task, seed)


def test_canaries_are_real_and_replay_to_their_recorded_rewards(base_url: str) -> None:
    """semantic.replayability and semantic.verifier_determinism on the shipped canaries: each
    is what the engine produces today (a fresh recording equals the file), and the server gives
    back exactly the recorded rewards in both reward modes."""
    assert canaries.record() == json.loads(canaries.CANARIES_PATH.read_text())
    listed = canaries.load()
    for task in TASK_NAMES:
        kinds = {c["expect"] for c in listed if c["task"] == task}
        assert kinds == {"win", "loss"}, task
    assert canaries.check(base_url) == []


def test_canary_losses_stay_far_below_the_top() -> None:
    """semantic.canary_floor, as far as it holds: gaming trajectories never score like a win.
    Not *at* the floor: flag_everything earns 0.30 * recall (0.305 on medium), see README."""
    for canary in canaries.load():
        if canary["expect"] == "loss":
            assert canary["grader_score"] < 0.5, canary["name"]
            assert canary["grader_rewards"][-1] == canary["grader_score"]
        else:
            assert canary["grader_score"] >= TOP - REWARD["oracle_tolerance"]


def test_a_changed_reward_is_caught_by_the_canary_check(base_url: str, tmp_path) -> None:
    """Negative control: a canary whose recorded reward is off is reported."""
    doc = json.loads(canaries.CANARIES_PATH.read_text())
    doc["canaries"] = doc["canaries"][:1]
    doc["canaries"][0]["grader_rewards"][-1] = 0.5
    bad = tmp_path / "canaries.json"
    bad.write_text(json.dumps(doc))
    problems = canaries.check(base_url, bad)
    assert len(problems) == 1 and "(grader)" in problems[0]


def test_runtime_seed_control(base_url: str) -> None:
    """runtime.seed_control: the seed is honoured and reported; another seed, another network."""
    first, _ = transcript(base_url, "medium", 11, [])
    again, _ = transcript(base_url, "medium", 11, [])
    other, _ = transcript(base_url, "medium", 12, [])
    assert first == again and first[0]["observation"]["seed"] == 11
    assert (
        other[0]["observation"]["visible_account_ids"]
        != first[0]["observation"]["visible_account_ids"]
    )


def test_runtime_episode_determinism(base_url: str) -> None:
    """runtime.episode_determinism: the same (task, seed, actions) replays to the same
    observations, rewards, done flags and states (hard: evasion events included)."""
    for canary in canaries.load():
        if canary["task"] == "hard" and canary["strategy"] != "flag_everything":
            args = (base_url, "hard", canary["seed"], canary["actions"], "shaped")
            assert transcript(*args) == transcript(*args)
    actions = [action_dict(*a) for a in play_recorded(Episode("hard", 5), RandomPolicy(5))]
    assert any(a["action_type"] == "inspect" for a in actions)
    args = (base_url, "hard", 5, actions, "shaped")
    assert transcript(*args) == transcript(*args)


def test_runtime_episode_isolation_after_a_reset_on_the_same_session(base_url: str) -> None:
    """runtime.episode_isolation ("same-server reset evidence"): an episode started on a
    session that just played another one is identical to one on a fresh session."""
    win = next(c for c in canaries.load() if c["name"] == "medium-flag_everything")
    fresh, fresh_states = transcript(base_url, "easy", 4, [{"action_type": "submit"}])
    with WsSession(base_url) as ws:
        ws.reset(task="medium", seed=win["seed"], reward_mode="grader")
        for action in win["actions"]:
            ws.step(action)
        frames = [ws.reset(task="easy", seed=4, reward_mode="grader")]
        states = [ws.state()]
        frames.append(ws.step({"action_type": "submit"}))
        states.append(ws.state())
    for frame in frames:
        frame["observation"].pop("episode_id")
    for state in states:
        state.pop("episode_id")
    assert (frames, states) == (fresh, fresh_states)


def test_semantic_no_solution_leakage(base_url: str) -> None:
    """semantic.no_solution_leakage: before the terminal step no observation or state carries
    the truth (ring labels, roles, scores); ring members appear only as ordinary visible ids.
    Pivots (the pivoting oracle's canaries) return ids and counts, never the trace values the
    search matched on."""
    # `ring_ids` (the debrief) is a key of every observation, null until the end: checked below
    truth_keys = {"gang_ids", "role", "is_fake", "gang", "label"}
    scored = ("grader_score", "tp", "fp", "fn", "recall", "precision")
    for canary in canaries.load():
        if canary["strategy"] not in ("oracle", "pivoting_oracle"):
            continue
        net = Episode(canary["task"], canary["seed"]).network
        ring = set(net.gang_ids)
        labels = {net.traces.value(net, t, a) for a in net.accounts for t in TRACES}
        frames, states = transcript(base_url, canary["task"], canary["seed"], canary["actions"])
        for frame, state in zip(frames[:-1], states[:-1], strict=True):
            obs = frame["observation"]
            assert not frame["done"]
            assert all(obs[k] is None for k in scored)
            assert obs.get("ring_ids") is None
            text = json.dumps([obs, state])
            assert not any(f'"{k}"' in text for k in truth_keys)
            assert not any(label in text for label in labels)
            assert set(obs["suspect_ids"]) <= set(obs["visible_account_ids"])
        assert frames[-1]["done"] and frames[-1]["observation"]["tp"] == len(ring)


def test_the_manifest_points_at_files_the_wheel_ships(tmp_path) -> None:
    """What `capabilities` and `execution` name is in the built wheel (package data), so an
    installed fakegang_env validates like the source tree."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    pytest.importorskip("setuptools")  # the wheel is built offline, without build isolation
    validation = yaml.safe_load(MANIFEST.read_text())["validation"]
    named = [
        "openenv.yaml",
        "server/requirements.txt",
        validation["capabilities"]["oracle"]["location"],
        validation["capabilities"]["canaries"],
        validation["execution"]["probe_path"],
        validation["execution"]["dockerfile"],
    ]
    repo = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         str(repo), "-w", str(tmp_path)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("fakegang-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    for relative in named:
        assert (MANIFEST.parent / relative).is_file(), relative
        assert f"fakegang_env/{relative}" in shipped, relative


def test_a_bad_reward_mode_is_refused_and_the_session_survives(base_url: str) -> None:
    from fakegang_env.validation.wire import WireError

    with WsSession(base_url) as ws:
        with pytest.raises(WireError, match="reward_mode must be one of shaped, grader"):
            ws.reset(task="easy", seed=1, reward_mode="points")
        with pytest.raises(WireError, match="reward_mode"):
            ws.reset(task="easy", seed=1, reward_mode=["grader"])
        assert ws.reset(task="easy", seed=1)["observation"]["seed"] == 1
        ws.step({"action_type": "submit"})
        late = ws.step({"action_type": "submit"})  # after the end: no second score
        assert late["reward"] == 0.0 and late["observation"]["last_action_error"]
    with WsSession(base_url) as ws:
        ws.reset(task="easy", seed=1, reward_mode="grader")
        ws.step({"action_type": "submit"})
        assert ws.step({"action_type": "submit"})["reward"] == 0.0
        assert ws.state()["step_count"] == 2  # OpenEnv's count of step messages
