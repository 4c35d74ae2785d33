"""Memory tables on a real SQLite file: upserts, de-duplication, bounds, best trajectory."""

from __future__ import annotations

import sqlite3

import pytest

from fakegang.tools.memory import lessons as memory_mod
from fakegang.tools.memory.schema import key_columns
from fakegang.tools.memory.store import Memory, Trajectory


def test_upserts_never_duplicate(tmp_path) -> None:
    db = tmp_path / "m.sqlite"
    mem = Memory(db)
    row = {
        "thread_id": "t1",
        "run_id": "r",
        "episode": 1,
        "task": "easy",
        "seed": 0,
        "status": "running",
    }
    mem.upsert_episode(row)
    mem.upsert_episode({**row, "status": "finished", "won": 1, "finished_at": "x"})
    for _ in range(3):
        mem.upsert_step({"thread_id": "t1", "idx": 0, "action": "inspect u_1", "mode": "agree"})
    mem.upsert_step({"thread_id": "t1", "idx": 1, "action": "submit", "mode": "rule_override"})
    mem.close()
    conn = sqlite3.connect(db)
    assert conn.execute("select count(*), max(status) from episodes").fetchone() == (1, "finished")
    assert conn.execute("select count(*) from steps").fetchone() == (2,)


def test_reflections_one_per_episode_and_no_near_duplicates(tmp_path) -> None:
    mem = Memory(tmp_path / "m.sqlite")
    text = "Inspect the follows of the likeliest member early; flag on agreeing signals."
    assert (
        mem.add_reflection(task="easy", thread_id="t1", text=text, won=False, reward=1.0)
        == "stored"
    )
    # the same node re-running for the same episode
    assert (
        mem.add_reflection(task="easy", thread_id="t1", text="other", won=False, reward=1.0)
        == "exists"
    )
    # another episode with nearly the same lesson (ids and numbers differ)
    near = text.replace("likeliest", "likeliest") + " "
    assert (
        mem.add_reflection(task="easy", thread_id="t2", text=near, won=False, reward=2.0)
        == "duplicate"
    )
    assert mem.reflection_count("easy") == 1
    assert mem.reflection_count("hard") == 0


def test_reflections_are_bounded_and_prompts_get_the_last_few(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(memory_mod, "MAX_REFLECTIONS_PER_TASK", 5)
    mem = Memory(tmp_path / "m.sqlite")
    topics = ["budget", "evasion", "customers", "proxies", "bios", "hours", "renames", "memes"]
    for i, topic in enumerate(topics):
        status = mem.add_reflection(
            task="medium",
            thread_id=f"t{i}",
            text=f"Lesson about {topic} " * (i + 1),
            won=False,
            reward=0.0,
        )
        assert status == "stored"
    assert mem.reflection_count("medium") == 5
    last = mem.reflections("medium", n=4)
    assert [r.thread_id for r in last] == ["t4", "t5", "t6", "t7"]  # oldest first


def test_best_trajectory_only_improves(tmp_path) -> None:
    mem = Memory(tmp_path / "m.sqlite")
    a = Trajectory("easy", "t1", 15.0, 0.93, ["INSPECT u_1", "FLAG u_1"], "[WIN] ...")
    worse = Trajectory("easy", "t2", 14.0, 0.92, ["INSPECT u_2"], "[WIN] ...")
    better = Trajectory("easy", "t3", 17.0, 0.97, ["FLAG u_3"], "[WIN] ...")
    assert mem.maybe_save_trajectory(a)
    assert not mem.maybe_save_trajectory(worse)
    assert mem.maybe_save_trajectory(a)  # re-running the node that saved it
    assert mem.maybe_save_trajectory(better)
    assert mem.best_trajectory("easy").thread_id == "t3"


def test_read_only_memory_writes_nothing(tmp_path) -> None:
    db = tmp_path / "m.sqlite"
    Memory(db).close()
    ro = Memory(db, read_only=True)
    ro.upsert_episode({"thread_id": "t1", "task": "easy", "status": "finished"})
    ro.save_alpha("easy", 0.5, 1.0, 4)
    assert (
        ro.add_reflection(task="easy", thread_id="t1", text="x y z", won=True, reward=1)
        == "read-only"
    )
    assert ro.episode("t1") is None and ro.alpha("easy") is None


def test_recent_win_rate_and_alpha_roundtrip(tmp_path) -> None:
    mem = Memory(tmp_path / "m.sqlite")
    for i in range(12):
        mem.upsert_episode(
            {
                "thread_id": f"t{i}",
                "task": "hard",
                "status": "finished",
                "won": int(i >= 8),
                "finished_at": f"2026-01-01T00:00:{i:02d}",
                "learns": 1,
            }
        )
    assert mem.recent_win_rate("hard") == 0.4  # last 10: t2..t11, wins t8..t11
    mem.save_alpha("hard", 0.52, 0.4, 4)
    assert mem.alpha("hard") == 0.52


def test_a_database_from_before_the_reuse_columns_gets_them(tmp_path) -> None:
    db = tmp_path / "old.sqlite"
    conn = sqlite3.connect(db)
    columns = ", ".join(sorted(key_columns()["steps"]))  # every column version 1 always had
    conn.execute(f"create table steps ({columns}, primary key (thread_id, idx))")
    conn.execute(
        "insert into steps (thread_id, idx, action, mode, llm_latency_s) "
        "values ('t', 0, 'submit', 'agree', 2.5)"
    )
    conn.commit()
    conn.close()
    mem = Memory(db)
    mem.upsert_step(
        {"thread_id": "t", "idx": 1, "action": "submit", "mode": "llm", "llm_latency_s": 1.0,
         "llm_prompt_tokens": 700, "llm_prompt_tokens_reused": 450}
    )  # fmt: skip
    rows = mem.steps("t")
    assert [r["llm_prompt_tokens_reused"] for r in rows] == [None, 450]
    assert rows[0]["llm_latency_s"] == 2.5  # the old row is kept as it was


def test_trim_keeps_the_newest_rows_of_one_task_only(tmp_path) -> None:
    mem = Memory(tmp_path / "m.sqlite")
    mem.db["bounded"].insert_all(
        [{"id": i, "task": "easy" if i % 2 else "hard", "at": f"{i:04d}"} for i in range(1, 1201)],
        pk="id",
    )
    args = dict(key="id", where="task = ?", args=["easy"], order="at desc", keep=3)
    assert mem.keys_beyond("bounded", **args)[:2] == [1193, 1191]  # past the 3 newest
    assert mem.trim("bounded", **args) == 597  # more than one 500-parameter chunk
    easy = [r["id"] for r in mem.db.query("select id from bounded where task = 'easy'")]
    assert easy == [1195, 1197, 1199]
    assert mem.db["bounded"].count == 3 + 600  # the other task's rows are untouched
    assert mem.trim("bounded", **args) == 0  # already within the bound
    assert mem.trim("bounded", key="id", order="id desc", keep=1) == 602  # no where: whole table
    assert [r["id"] for r in mem.db.query("select id from bounded")] == [1200]


def test_trim_in_a_read_only_memory_deletes_nothing(tmp_path) -> None:
    db = tmp_path / "m.sqlite"
    Memory(db).db["bounded"].insert_all([{"id": i} for i in range(5)], pk="id")
    ro = Memory(db, read_only=True)
    assert ro.trim("bounded", key="id", order="id desc", keep=1) == 0
    assert ro.db["bounded"].count == 5


@pytest.mark.parametrize(
    "write",
    [
        lambda m: m.db["notes"].create({"k": str}, pk="k"),
        lambda m: m.upsert_episode({"thread_id": "t1", "task": "easy", "status": "running"}),
    ],
    ids=["create-table", "upsert"],
)
def test_a_write_racing_another_connection_waits_for_it_instead_of_failing(tmp_path, write) -> None:
    """sqlite-utils reads the schema inside its write transaction before it writes. Begun with a
    deferred BEGIN, another connection's commit in between made SQLite refuse the write at once
    ("database is locked", no busy wait): 1 % of fresh-file episodes under load, and a CI run.
    The memory's writes take the write lock first, so the other connection has to wait."""
    db = tmp_path / "agent.sqlite"
    memory = Memory(db)
    other = sqlite3.connect(db, timeout=0.2, isolation_level=None)
    interloper: list[str] = []

    def commit_from_the_other_connection(sql: str, params: object) -> None:
        if sql.lstrip().upper().startswith(("CREATE", "INSERT")) and not interloper:
            try:
                other.execute("insert into alpha (task, alpha) values ('medium', 0.3)")
                interloper.append("committed")
            except sqlite3.OperationalError as err:
                interloper.append(str(err))

    memory.db._tracer = commit_from_the_other_connection
    write(memory)  # raised "database is locked" with sqlite-utils' deferred BEGIN (create-table)
    memory.db._tracer = None

    assert interloper == ["database is locked"]  # it waited its 0.2 s behind our write lock
    other.execute("insert into alpha (task, alpha) values ('medium', 0.3)")  # and then got in
    assert [r["task"] for r in memory.db.query("select task from alpha")] == ["medium"]


def test_a_memory_from_before_the_tactics_column_gains_it_and_keeps_its_versions(tmp_path) -> None:
    """A database written before weights versions carried the inferred tactics opens, gains the
    column, and its old versions read back with no tactics (not an error)."""
    from fakegang.tools.learning import experience

    db = tmp_path / "old.sqlite"
    Memory(db).close()
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE weight_versions DROP COLUMN tactics")
    conn.execute("PRAGMA user_version = 1")  # as the code before migrations stamped it
    conn.execute(
        "INSERT INTO weight_versions (task, version, profile, frontier, thread_id, n_rows, "
        "n_episodes, created_at) VALUES ('hard', 1, '{}', '{}', 't-old', 0, 1, 'x')"
    )
    conn.commit()
    conn.close()
    mem = Memory(db)
    try:
        assert "tactics" in mem.db["weight_versions"].columns_dict
        (old,) = experience.version_history(mem, "hard")
        assert old["version"] == 1 and old["tactics"] is None
    finally:
        mem.close()
