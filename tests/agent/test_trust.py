"""Credit that buys trust: on hand-made credit records, a model whose judged disagreements keep
winning ends up deciding wherever the rule is not near-certain, with no stake; one that keeps
losing stays at the floor and is not asked; `--alpha seed` is unchanged."""

from __future__ import annotations

from fakegang.graph.context import Context
from fakegang.graph.learning import pinned_at_start
from fakegang.tools.learning import credit, credit_store
from fakegang.tools.learning.alpha import ALPHA_CAPS, ALPHA_FLOOR, arbitrate_mode
from fakegang.tools.memory.store import Memory


def _pinned_after(tmp_path, records: list[credit.Credit], alpha_rule: str = "credit") -> dict:
    db = tmp_path / f"{alpha_rule}-{len(records)}-{records[0].better}.sqlite"
    memory = Memory(db)
    for i, c in enumerate(records):
        credit_store.record(memory, "hard", f"t{i}", c, llm_calls=10, actions=80, alpha=0.2)
    ctx = Context(env_url="http://127.0.0.1:1", db_path=str(db), alpha_rule=alpha_rule, learn=True)
    pinned = pinned_at_start(ctx, memory, "hard")
    memory.close()
    return pinned


def _decides(pinned: dict, rule_confidence: float, calls_so_far: int = 0) -> str:
    """The mode of one disagreement (the rule says inspect, the LLM says flag) at step 0."""
    stake = pinned["llm_stake"]
    ask = credit.should_ask(
        rule_confidence,
        pinned["alpha"],
        pinned["llm_gain"],
        0.0,  # no exploration: only trusted calls
        "hard:0:1",
        0,
        None if stake is None else stake - calls_so_far,
    )
    if not ask.ask:
        return "not asked"
    return arbitrate_mode("inspect u_1", rule_confidence, "flag u_2", pinned["alpha"])


def test_a_winning_record_decides_wherever_the_rule_is_not_near_certain(tmp_path):
    winning = [credit.Credit(better=4, worse=0, ties=3)] * 5  # 20 won, none lost
    pinned = _pinned_after(tmp_path, winning)
    assert pinned["alpha"] == credit.ALPHA_TRUSTED > ALPHA_CAPS["hard"]
    assert pinned["llm_stake"] is None  # no per-episode bound on its calls
    assert pinned["explore_report_weight"] == credit.EXPLORE_BEFORE_FIRST_FLAG
    # above the task's cap, and however many calls it has made this episode
    assert _decides(pinned, 0.9) == "llm"
    assert _decides(pinned, 0.5, calls_so_far=500) == "llm"
    assert _decides(pinned, 0.995) == "not asked"  # a near-certain rule still stands


def test_a_young_record_decides_within_its_stake_and_cap(tmp_path):
    pinned = _pinned_after(tmp_path, [credit.Credit(better=5, worse=1)])
    assert ALPHA_FLOOR < pinned["alpha"] < ALPHA_CAPS["hard"]
    assert pinned["llm_stake"] == credit.STAKE_MIN
    assert _decides(pinned, 0.3) == "llm"
    assert _decides(pinned, 0.3, calls_so_far=credit.STAKE_MIN) == "not asked"


def test_a_losing_record_stays_at_the_floor_and_is_not_asked(tmp_path):
    losing = [credit.Credit(better=1, worse=4)] * 5
    pinned = _pinned_after(tmp_path, losing)
    assert pinned["alpha"] == ALPHA_FLOOR and pinned["llm_gain"] < 0
    assert pinned["llm_stake"] == credit.STAKE_MIN
    assert pinned["explore_rate"] == credit.EXPLORE_FLOOR
    assert pinned["explore_report_weight"] == 1.0  # behind the rule: not judged sooner
    assert _decides(pinned, 0.1) == "not asked"
    assert _decides(pinned, 0.5) == "not asked"


def test_the_seed_rule_ignores_the_credit(tmp_path):
    winning = [credit.Credit(better=4, worse=0)] * 5
    pinned = _pinned_after(tmp_path, winning, alpha_rule="seed")
    assert pinned["alpha"] == ALPHA_FLOOR and pinned["llm_stake"] is None
    assert pinned["llm_gain"] == 1.0 and pinned["explore_rate"] == 0.0
    assert pinned["explore_report_weight"] == 1.0


def test_a_model_that_mostly_agrees_elsewhere_explores_a_new_task_less(tmp_path):
    """The share of calls judged is the model's, not the task's: easy's record, where 2 of 40
    calls were judged (and won), lowers hard's first exploration rate; without it hard starts
    at the full rate."""
    db = tmp_path / "curriculum.sqlite"
    memory = Memory(db)
    ctx = Context(env_url="http://127.0.0.1:1", db_path=str(db), learn=True)
    assert pinned_at_start(ctx, memory, "hard")["explore_rate"] == credit.EXPLORE_RATE
    for i in range(4):
        record = credit.Credit(better=1 if i < 2 else 0, worse=0, ties=2)
        credit_store.record(memory, "easy", f"e{i}", record, llm_calls=10, actions=40, alpha=0.2)
    share = credit_store.task_credit(memory, None).judged_share
    assert share == (2 + credit.DISAGREE_REF * credit.DISAGREE_PRIOR_CALLS) / (40 + 4)
    promise = credit.chance_better(credit.Credit(2, 0)) / credit.chance_better(credit.Credit())
    hard = pinned_at_start(ctx, memory, "hard")["explore_rate"]
    assert hard == round(credit.EXPLORE_RATE * promise * share / credit.DISAGREE_REF, 4)
    assert hard < credit.EXPLORE_RATE  # two wins alone would keep the full rate
    memory.close()


def test_a_model_that_lost_elsewhere_explores_a_new_task_less(tmp_path):
    """The promise is the model's too: losing its disagreements on easy lowers hard's first
    exploration rate, while hard's α, gain and stake still start from hard's own (empty)
    record."""
    db = tmp_path / "losing.sqlite"
    memory = Memory(db)
    ctx = Context(env_url="http://127.0.0.1:1", db_path=str(db), learn=True)
    fresh = pinned_at_start(ctx, memory, "hard")
    for i in range(4):
        record = credit.Credit(better=0, worse=1, ties=0)
        credit_store.record(memory, "easy", f"e{i}", record, llm_calls=1, actions=40, alpha=0.2)
    hard = pinned_at_start(ctx, memory, "hard")
    assert hard["explore_rate"] == credit.EXPLORE_FLOOR < fresh["explore_rate"]
    for key in ("alpha", "llm_gain", "llm_stake"):
        assert hard[key] == fresh[key]
    memory.close()
