"""The DB explorer's logic on real SQLite files and a real PostgreSQL server."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker import Broker, Decision
from broker.kinds.db.explorer import DbExplorer
from broker.kinds.db.profiles import DbProfile
from tests.helpers import ScriptedConfirmer, new_broker
from tests.servers.databases import DatabaseServer
from tests.unit.kinds.db_setup import add_profile, server_profile


def make_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    with conn:
        conn.executescript(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');"
        )
    conn.close()
    return path


def values(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT v FROM t ORDER BY id")]
    finally:
        conn.close()


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        add_profile(b, DbProfile(name="local", engine="sqlite", path=str(make_db(tmp_path / "a.db"))))
        yield b


async def test_queries_run_read_only_with_the_same_limits(broker: Broker) -> None:
    explorer = DbExplorer(broker)
    rows = await explorer.query("local", "SELECT id, v FROM t ORDER BY id")
    write = await explorer.query("local", "UPDATE t SET v = 'x'")
    many = await explorer.query(
        "local", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT n FROM r"
    )
    assert rows["data"] == {"columns": ["id", "v"], "rows": [[1, "a"], [2, "b"]]}
    assert write["error"]["code"] == "refused"
    assert many["error"]["code"] == "too_many_rows"


@pytest.mark.parametrize(
    ("profile", "sql", "code"),
    [
        pytest.param("local", "SELECT 1; SELECT 2", "refused", id="two-statements"),
        pytest.param("local", "SELECT 'open", "refused", id="unterminated"),
        pytest.param("local", "   ", "refused", id="empty"),
        pytest.param("nowhere", "SELECT 1", "not_configured", id="no-profile"),
        pytest.param("local", "SELECT * FROM missing", "query_failed", id="db-error"),
    ],
)
async def test_problems_come_back_as_envelopes(broker: Broker, profile: str, sql: str, code: str) -> None:
    result = await DbExplorer(broker).query(profile, sql)
    assert result["ok"] is False
    assert result["error"]["code"] == code


async def test_writes_are_refused_until_the_user_turns_them_on(broker: Broker, tmp_path: Path) -> None:
    explorer = DbExplorer(broker)
    result = await explorer.request_write("local", "UPDATE t SET v = 'x'", ScriptedConfirmer())
    assert result["error"]["code"] == "refused"
    assert values(tmp_path / "a.db") == ["a", "b"]


async def test_turning_writes_on_is_confirmed_and_a_decline_leaves_them_off(broker: Broker) -> None:
    explorer = DbExplorer(broker)
    asked = ScriptedConfirmer(Decision.DECLINED)
    assert await explorer.enable_writes("local", asked) is Decision.DECLINED
    assert explorer.writes_enabled("local") is False
    assert asked.shown[0].title == "Allow database writes"
    assert await explorer.enable_writes("local", ScriptedConfirmer()) is Decision.CONFIRMED
    assert explorer.writes_enabled("local") is True
    assert [p.writes_enabled for p in explorer.profiles()] == [True]


async def test_each_write_is_still_confirmed_and_returns_rows_affected(
    broker: Broker, tmp_path: Path
) -> None:
    explorer = DbExplorer(broker)
    await explorer.enable_writes("local", ScriptedConfirmer())
    confirm = ScriptedConfirmer()
    done = await explorer.request_write("local", "UPDATE t SET v = 'x' WHERE id = 1", confirm)
    declined = await explorer.request_write("local", "DELETE FROM t", ScriptedConfirmer(Decision.DECLINED))
    assert done == {"ok": True, "data": {"rowsAffected": 1}, "error": None}
    assert declined["error"]["code"] == "declined"
    assert confirm.shown[0].title == "Confirm database write"
    assert dict(confirm.shown[0].fields)["SQL"] == "UPDATE t SET v = 'x' WHERE id = 1"
    assert values(tmp_path / "a.db") == ["x", "b"]


async def test_a_token_is_bound_to_the_exact_sql_and_used_once(broker: Broker, tmp_path: Path) -> None:
    explorer = DbExplorer(broker)
    await explorer.enable_writes("local", ScriptedConfirmer())
    summary = await explorer.describe_write("local", "UPDATE t SET v = 'x' WHERE id = 1")
    other = await explorer.write("local", "DELETE FROM t", summary.token)
    summary = await explorer.describe_write("local", "UPDATE t SET v = 'x' WHERE id = 1")
    first = await explorer.write("local", "UPDATE t SET v = 'x' WHERE id = 1", summary.token)
    again = await explorer.write("local", "UPDATE t SET v = 'x' WHERE id = 1", summary.token)
    bare = await explorer.write("local", "UPDATE t SET v = 'y'", None)
    assert other["error"]["code"] == "confirmation_required"
    assert first["ok"] is True
    assert again["error"]["code"] == "confirmation_required"
    assert bare["error"]["code"] == "confirmation_required"
    assert values(tmp_path / "a.db") == ["x", "b"]


async def test_writes_turn_off_when_the_profile_changes_or_the_user_says_so(
    broker: Broker, tmp_path: Path
) -> None:
    explorer = DbExplorer(broker)
    await explorer.enable_writes("local", ScriptedConfirmer())
    add_profile(broker, DbProfile(name="local", engine="sqlite", path=str(make_db(tmp_path / "b.db"))))
    assert explorer.writes_enabled("local") is False
    await explorer.enable_writes("local", ScriptedConfirmer())
    explorer.disable_writes("local")
    assert explorer.writes_enabled("local") is False


async def test_writes_are_off_again_after_a_restart(tmp_path: Path, broker: Broker) -> None:
    await DbExplorer(broker).enable_writes("local", ScriptedConfirmer())
    async with new_broker(tmp_path / "home") as restarted:
        assert DbExplorer(restarted).writes_enabled("local") is False


async def test_decisions_are_audited(broker: Broker) -> None:
    explorer = DbExplorer(broker)
    await explorer.enable_writes("local", ScriptedConfirmer())
    await explorer.request_write("local", "UPDATE t SET v = 'z'", ScriptedConfirmer(Decision.DECLINED))
    records = [(r.extension, r.operation, r.decision) for r in broker.audit.records()]
    assert ("helm.db-explorer", "enable writes", "confirmed") in records
    assert ("helm.db-explorer", "write", "declined") in records


async def test_postgres_ad_hoc_sql_stays_read_only_and_writes_commit_when_confirmed(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_rw", name="pg")
    postgres_server.admin_sql(
        "\\connect helm\nCREATE TABLE IF NOT EXISTS explorer_t (v int); GRANT ALL ON explorer_t TO helm_rw;"
    )
    async with new_broker(tmp_path / "home") as b:
        add_profile(b, prof, pw)
        explorer = DbExplorer(b)
        read = await explorer.query("pg", "INSERT INTO explorer_t VALUES (1)")
        await explorer.enable_writes("pg", ScriptedConfirmer())
        written = await explorer.request_write(
            "pg", "INSERT INTO explorer_t VALUES (1), (2)", ScriptedConfirmer()
        )
        count = await explorer.query("pg", "SELECT count(*) FROM explorer_t")
    assert read["error"]["code"] == "query_failed"
    assert written["data"] == {"rowsAffected": 2}
    assert count["data"]["rows"] == [["2"]]
