"""An adaptive campaign through the real graph and the embedded server: the operator's token
passes from each round's debrief to the next reset, its moves reach the campaign JSON, the PNG
and the report, and the `prior` mode stays frozen."""

from __future__ import annotations

import json

from fakegang.cli.main import main
from fakegang.graph.graph import compile_with_sqlite
from fakegang.report.data import load_run
from fakegang.report.html import operator_section
from fakegang.tools.learning import experience
from fakegang.tools.memory.store import Memory
from fakegang.view.episode import load_episode
from fakegang_env.evasion_budget import BUDGET
from fakegang_env.operator import opening

ROUNDS = 3


def test_adaptive_campaign_passes_the_operator_on_and_prior_learns_nothing(tmp_path, capsys):
    db, out = tmp_path / "a.sqlite", tmp_path / "out"
    code = main(
        ["campaign", "--task", "medium", "--tactics", "adaptive", "--campaigns", "0-0",
         "--rounds", str(ROUNDS), "--model", "fake", "--modes", "prior,learning,oracle",
         "--json", "--no-progress", "--db", str(db), "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["curves"]) == {"prior", "learning", "oracle"}
    assert set(summary["operator"]) == {"prior", "learning", "oracle"}
    gain = summary["auc"]["learning"] - summary["auc"]["prior"]
    assert summary["learning_minus_prior"] == round(gain, 4)
    for seen in summary["operator"].values():
        rounds = seen["campaigns"]["0"]
        assert [r["round"] for r in rounds] == list(range(ROUNDS))
        assert rounds[0]["playbook"] == opening("medium", 0).playbook
        assert all(r["cost"] <= BUDGET and "next_token" not in r for r in rounds)
        assert len(seen["survival"]) == ROUNDS and len(seen["most_weakened"]) == ROUNDS
        # every round after the first was chosen from the takedowns of the one before
        for before, after in zip(rounds, rounds[1:], strict=False):
            assert after["reason"].startswith(("weakened ", "kept the playbook"))
            kept = after["reason"].startswith("kept")
            assert (after["playbook"] == before["playbook"]) == kept
    assert summary["operator"]["oracle"]["survival"] == [0.0] * ROUNDS
    assert (out / "campaign.png").stat().st_size > 5000

    # prior: the learning agent's starting weights every round, nothing refit or learned
    prior_db = tmp_path / "a-prior-c0.sqlite"
    memory = Memory(prior_db)
    assert experience.version_history(memory, "medium") == []
    app = compile_with_sqlite(str(prior_db))
    threads = [
        r["thread_id"] for r in memory.db.query("select thread_id from episodes order by episode")
    ]
    assert len(threads) == ROUNDS
    for i, thread in enumerate(threads):
        state = app.get_state({"configurable": {"thread_id": thread}}).values
        assert state["weights_version"] == experience.UNKNOWN_OPERATOR_VERSION
        assert ("operator_token" in state) == (i > 0)  # round 0 needs none
        assert state["operator"]["round"] == i
    app.checkpointer.conn.close()
    memory.close()
    # the viewer rebuilds an adaptive round's case from the playbook its debrief revealed
    page = load_episode(prior_db, threads[1])
    assert page["case_error"] is None and page["case"]["diverged_at"] is None
    learning = Memory(tmp_path / "a-learning-c0.sqlite")
    assert len(experience.version_history(learning, "medium")) == ROUNDS
    learning.close()

    # the report of the learning run shows the operator round by round
    run_id = next(
        r["run_id"] for r in Memory(db).db.query("select run_id from runs where run_id like ?",
                                                 ["%learning%"])
    )  # fmt: skip
    data = load_run(run_id, db)
    assert [r["episode"] for r in data.operator] == [1, 2, 3]
    page = operator_section(data)
    assert "The operator" in page and data.operator[1]["reason"][:20] in page


def test_a_lost_adaptive_round_is_rebuilt_with_its_token_and_ends_the_same(env_url):
    from fakegang.graph.recovery import rebuild_env_episode
    from fakegang.tools.env_client import EnvClient, reset_options

    client = EnvClient(env_url)
    first = client.reset("medium", None, "adaptive-r0", tactics="adaptive", campaign=3, round=0)
    for i, aid in enumerate(first.visible_account_ids):
        client.step("adaptive-r0", "flag", aid, i)
    done = client.step("adaptive-r0", "submit", None, len(first.visible_account_ids))
    state = {"tactics": "adaptive", "campaign": 3, "round": 1,
             "operator_token": done.operator.next_token}  # fmt: skip
    obs = client.reset("medium", None, "adaptive-r1", **reset_options(state))
    actions = [(0, f"inspect {obs.visible_account_ids[0]}"), (1, "submit")]
    client.step("adaptive-r1", "inspect", obs.visible_account_ids[0], 0)
    ended = client.step("adaptive-r1", "submit", None, 1)
    rebuilt = rebuild_env_episode(
        client, task="medium", seed=obs.seed, episode_id="adaptive-r1-again", actions=actions,
        expect_action_count=2, expect_step_count=ended.step_count, **reset_options(state),
    )  # fmt: skip
    assert rebuilt.operator == ended.operator and rebuilt.operator.round == 1
    assert rebuilt.operator.next_token == ended.operator.next_token
