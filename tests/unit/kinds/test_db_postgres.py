"""The db kind on a real PostgreSQL server, through the real broker."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from broker import Decision
from broker.kinds.db import postgres as pg_engine
from broker.kinds.db.postgres import PostgresEngine
from broker.kinds.db.profiles import DATABASES, DbProfile
from tests.helpers import ScriptedConfirmer
from tests.servers.databases import DatabaseServer
from tests.unit.kinds.db_relay import Relay
from tests.unit.kinds.db_setup import db_world, run_sql, server_profile


def admin(db: DatabaseServer, sql: str) -> str:
    return db.admin_sql("\\connect helm\n" + sql)


@pytest.fixture
def scratch(postgres_server: DatabaseServer) -> str:
    """A fresh table ``scratch_<hex>`` (id, label) with two rows, writable by helm_rw."""
    name = f"scratch_{secrets.token_hex(4)}"
    admin(
        postgres_server,
        f"CREATE TABLE {name} (id int PRIMARY KEY, label text);"
        f"INSERT INTO {name} VALUES (1, 'one'), (2, 'two');"
        f"GRANT SELECT ON {name} TO helm_ro; GRANT SELECT, INSERT, UPDATE, DELETE ON {name} TO helm_rw;",
    )
    return name


def labels(db: DatabaseServer, table: str) -> str:
    return admin(
        db,
        "\\pset format unaligned\n\\pset tuples_only on\n"
        f"SELECT string_agg(label, ',' ORDER BY id) FROM {table};",
    )


TYPES_SQL = (
    "SELECT 1::int4 AS i, 9007199254740993::int8 AS big, 1.50::numeric AS dec, 2.5::float8 AS f, "
    "'\\x00ff'::bytea AS b, DATE '2024-02-03' AS d, TIMESTAMPTZ '2024-02-03 04:05:06+00' AS ts, "
    "NULL::text AS n, true AS t, ARRAY[1, 2]::int8[] AS arr, INTERVAL '1 day 2 hours' AS iv"
)


async def test_read_returns_values_as_the_contract_types(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    async with db_world(tmp_path, "postgres", {"types": {"sql": TYPES_SQL}}, profile=prof, password=pw) as w:
        result = await w.call("types")
    assert result["ok"] is True, result
    assert result["data"]["columns"] == ["i", "big", "dec", "f", "b", "d", "ts", "n", "t", "arr", "iv"]
    assert result["data"]["rows"] == [
        [1, "9007199254740993", "1.50", 2.5, "AP8=", "2024-02-03", "2024-02-03T04:05:06+00:00",
         None, True, ["1", "2"], "P1DT2H0M0S"]
    ]  # fmt: skip


async def test_args_bind_to_numbered_placeholders_and_convert_to_the_parameter_type(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    queries = {"items": {"sql": "SELECT name FROM items WHERE qty >= $2 AND name <> $1 ORDER BY id",
                         "params": ["skip", "min"]}}  # fmt: skip
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        as_number = await w.call("items", {"skip": "compass", "min": 1})
        as_text = await w.call("items", {"skip": "anchor", "min": "0"})
        wrong = await w.call("items", {"skip": "anchor", "min": "many"})
    assert as_number["data"]["rows"] == [["anchor"]]
    assert as_text["data"]["rows"] == [["compass"], ["sextant"]]
    assert wrong["error"]["code"] == "refused"
    assert "$2" in wrong["error"]["message"]


async def test_a_write_in_a_read_query_fails_and_changes_nothing(
    tmp_path: Path, postgres_server: DatabaseServer, scratch: str
) -> None:
    prof, pw = server_profile(postgres_server, "helm_rw")
    queries = {"sneak": {"sql": f"UPDATE {scratch} SET label = 'x' RETURNING id"}}
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        result = await w.call("sneak")
    assert result["error"]["code"] == "query_failed"
    assert "read-only transaction" in result["error"]["message"]
    assert labels(postgres_server, scratch).strip() == "one,two"


BYPASSES = {
    "two_statements": "SELECT 1; UPDATE {t} SET label = 'x'",
    "commit_first": "COMMIT; UPDATE {t} SET label = 'x'",
    "do_block": "DO $$ BEGIN UPDATE {t} SET label = 'x'; END $$",
    "set_read_write": "SET TRANSACTION READ WRITE",
    "session_read_write": "SELECT set_config('default_transaction_read_only', 'off', false)",
    "temp_table": "CREATE TEMP TABLE sneaky AS SELECT 1",
    "nextval": "SELECT nextval('items_id_seq')",
    "cte_update": "WITH x AS (UPDATE {t} SET label = 'x' RETURNING 1) SELECT * FROM x",
    "select_into": "SELECT * INTO sneaky FROM {t}",
}


@pytest.mark.parametrize("name", sorted(BYPASSES))
async def test_each_read_only_bypass_fails_and_changes_nothing(
    tmp_path: Path, postgres_server: DatabaseServer, scratch: str, name: str
) -> None:
    prof, pw = server_profile(postgres_server, "helm_rw")
    async with db_world(tmp_path, "postgres", {"q": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        result = await run_sql(w.broker, prof, BYPASSES[name].format(t=scratch))
        # The same pooled connection serves the next call; a write there must still fail.
        after = await run_sql(w.broker, prof, f"UPDATE {scratch} SET label = 'y'")
    assert after["ok"] is False
    assert result["ok"] is False or name in {"set_read_write", "session_read_write"}, result
    assert labels(postgres_server, scratch).strip() == "one,two"
    assert "sneaky" not in admin(postgres_server, "SELECT relname FROM pg_class WHERE relname = 'sneaky';")


SESSION_CHANGES = {
    "setting": ("SELECT set_config('search_path', 'nowhere', false)", "SHOW search_path", '"$user", public'),
    "advisory_lock": ("SELECT pg_advisory_lock(4242)::text",
                      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                      "AND pid = pg_backend_pid()", 0),
    "listen": ("LISTEN helm_channel", "SELECT count(*) FROM pg_listening_channels()", 0),
    "prepare": ("PREPARE sneaky AS SELECT 1",
                "SELECT count(*) FROM pg_prepared_statements WHERE name = 'sneaky'", 0),
    "hold_cursor": ("DECLARE c CURSOR WITH HOLD FOR SELECT 1",
                    "SELECT count(*) FROM pg_cursors WHERE name = 'c'", 0),
    "role_setting": ("SELECT set_config('statement_timeout', '0', false)", "SHOW statement_timeout", "6s"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SESSION_CHANGES))
async def test_session_state_never_reaches_the_next_call(
    tmp_path: Path, postgres_server: DatabaseServer, name: str
) -> None:
    change, probe, expected = SESSION_CHANGES[name]
    prof, pw = server_profile(postgres_server, "helm_ro")
    async with db_world(tmp_path, "postgres", {"q": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        await run_sql(w.broker, prof, change)
        pid_sql = "SELECT pg_backend_pid()"
        first_pid = (await run_sql(w.broker, prof, pid_sql))["data"]["rows"]
        result = await run_sql(w.broker, prof, probe)
        second_pid = (await run_sql(w.broker, prof, pid_sql))["data"]["rows"]
    assert first_pid == second_pid  # the very same pooled session
    value = result["data"]["rows"][0][0]
    assert value == expected or str(value) == str(expected)


async def test_a_confirmed_write_commits_and_returns_rows_affected(
    tmp_path: Path, postgres_server: DatabaseServer, scratch: str
) -> None:
    prof, pw = server_profile(postgres_server, "helm_rw")
    sql = f"UPDATE {scratch} SET label = $1 WHERE id >= $2"
    queries = {"rename": {"sql": sql, "params": ["label", "from"], "write": True}}
    confirmer = ScriptedConfirmer()
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw, write=True) as w:
        result = await w.broker.request(w.ctx, "app", "rename", {"label": "new", "from": 1}, confirmer)
        declined = await w.broker.request(
            w.ctx, "app", "rename", {"label": "no", "from": 1}, ScriptedConfirmer(Decision.DECLINED)
        )
    assert result == {"ok": True, "data": {"rowsAffected": 2}, "error": None}
    assert declined["error"]["code"] == "declined"
    assert labels(postgres_server, scratch).strip() == "new,new"
    text = confirmer.shown[0].as_text()
    assert postgres_server.host not in text
    assert pw not in text


async def test_a_failing_write_rolls_back(
    tmp_path: Path, postgres_server: DatabaseServer, scratch: str
) -> None:
    prof, pw = server_profile(postgres_server, "helm_rw")
    queries = {"dup": {"sql": f"INSERT INTO {scratch} VALUES ($1, 'dup')", "params": ["id"], "write": True}}
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw, write=True) as w:
        result = await w.broker.request(w.ctx, "app", "dup", {"id": 1}, ScriptedConfirmer())
    assert result["error"]["code"] == "query_failed"
    assert "duplicate key" in result["error"]["message"]


async def test_row_limits_give_too_many_rows_and_too_large(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    queries = {
        "rows": {"sql": "SELECT g FROM generate_series(1, $1) g", "params": ["n"]},
        "wide": {"sql": "SELECT repeat('x', 5000) FROM generate_series(1, 300)"},
    }
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        full = await w.call("rows", {"n": 1000})
        over = await w.call("rows", {"n": 100000})
        wide = await w.call("wide")
    assert len(full["data"]["rows"]) == 1000
    assert over["error"]["code"] == "too_many_rows"
    assert wide["error"]["code"] == "too_large"


async def test_a_slow_query_times_out_and_is_cancelled_on_the_server(
    tmp_path: Path, postgres_server: DatabaseServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_engine, "QUERY_SECONDS", 0.5)
    prof, pw = server_profile(postgres_server, "helm_ro")
    queries = {"slow": {"sql": "SELECT pg_sleep(30) /* helm-slow-probe */"}, "one": {"sql": "SELECT 1"}}
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        result = await w.call("slow")
        running = admin(
            postgres_server,
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%helm-slow-probe%' "
            "AND pid <> pg_backend_pid();",
        )
        after = await w.call("one")
    assert result["error"]["code"] == "timeout"
    assert running.split()[-3] == "0" or " 0\n" in running
    assert after["ok"] is True


async def test_query_failed_never_carries_the_host_or_password(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    queries = {"echo": {"sql": "SELECT CAST(CAST($1 AS text) AS int)", "params": ["v"]}}
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        result = await w.call("echo", {"v": f"{pw} at {postgres_server.host}"})
    assert result["error"]["code"] == "query_failed"
    assert "invalid input syntax" in result["error"]["message"]
    assert pw not in result["error"]["message"]
    assert postgres_server.host not in result["error"]["message"]


async def test_a_wrong_password_is_unavailable_without_secrets(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, _pw = server_profile(postgres_server, "helm_ro")
    async with db_world(
        tmp_path, "postgres", {"one": {"sql": "SELECT 1"}}, profile=prof, password="wrong-pass"
    ) as w:
        result = await w.call("one")
    assert result["error"]["code"] == "unavailable"
    assert "password" in result["error"]["message"]
    assert "wrong-pass" not in result["error"]["message"]
    assert postgres_server.host not in result["error"]["message"]


async def test_a_result_far_over_the_cap_is_cut_on_the_wire_and_the_next_call_works(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    # 200 rows of 1 MiB: asyncpg would read them all before Helm could count a row.
    relay = Relay(postgres_server.port)
    await relay.start()
    prof, pw = server_profile(postgres_server, "helm_ro")
    prof = DbProfile(**{**prof.__dict__, "port": relay.port})
    queries = {
        "huge": {"sql": "SELECT repeat('x', 1048576) FROM generate_series(1, 200)"},
        "one": {"sql": "SELECT 1"},
    }
    try:
        async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
            huge = await w.call("huge")
            after = await w.call("one")
    finally:
        await relay.stop()
    assert huge["error"]["code"] == "too_large"
    assert relay.sent_to_client < 64 * 1024 * 1024  # the cap, plus what the sockets held
    assert after["ok"] is True


async def test_a_server_that_goes_down_is_unavailable_and_the_next_call_after_it_returns_works(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    relay = Relay(postgres_server.port)
    prof, pw = server_profile(postgres_server, "helm_ro")
    prof = DbProfile(**{**prof.__dict__, "port": relay.port})
    async with db_world(tmp_path, "postgres", {"one": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        down = await w.call("one")
        await relay.start()
        up = await w.call("one")
        await relay.stop()  # the pooled session dies with the relay
        down_again = await w.call("one")
        await relay.start()
        back = await w.call("one")
        await relay.stop()
    assert down["error"]["code"] == "unavailable"
    assert str(relay.port) not in down["error"]["message"]
    assert down["error"]["message"].startswith(
        f"database {prof.name!r}: Helm cannot reach the database server: the connection was refused"
    )
    assert up["ok"] is True
    assert down_again["error"]["code"] == "unavailable"
    assert back["ok"] is True


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        pytest.param("helm_ro", [], id="read-only"),
        pytest.param("helm_rw", ["can write"], id="read-write"),
        pytest.param("helm_admin", ["superuser", "can write"], id="superuser"),
    ],
)
async def test_role_warnings_name_superusers_and_roles_that_can_write(
    postgres_server: DatabaseServer, role: str, expected: list[str]
) -> None:
    prof, pw = server_profile(postgres_server, role)
    engine = PostgresEngine(prof, pw)
    try:
        warnings = await engine.role_warnings()
    finally:
        await engine.aclose()
    text = " ".join(warnings)
    for fragment in expected:
        assert fragment in text
    if not expected:
        assert warnings == []


async def test_a_profile_whose_password_left_the_store_is_not_configured(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    async with db_world(tmp_path, "postgres", {"one": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        w.broker.credentials.delete(DATABASES.secret_key(prof.name, "password"))
        result = await w.call("one")
    assert result["error"]["code"] == "not_configured"
    assert "password" in result["error"]["message"]


async def test_a_temporary_table_made_by_a_write_is_gone_for_the_next_call(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_rw")
    async with db_world(tmp_path, "postgres", {"one": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        made = await run_sql(w.broker, prof, "CREATE TEMP TABLE sneaky_temp AS SELECT 1 AS a", write=True)
        seen = await run_sql(w.broker, prof, "SELECT count(*) FROM pg_class WHERE relname = 'sneaky_temp'")
    assert made["ok"] is True, made
    assert seen["data"]["rows"] == [["0"]]


async def test_closing_the_broker_closes_every_pooled_connection(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro", name="closing")
    async with db_world(
        tmp_path, "postgres", {"one": {"sql": "SELECT 1"}}, profile=prof, password=pw, service="closing"
    ) as w:
        assert (await w.call("one"))["ok"] is True
        assert "1" in admin(postgres_server, ACTIVE_HELM_SESSIONS).split()
    assert admin(postgres_server, ACTIVE_HELM_SESSIONS).split()[-3] == "0"


ACTIVE_HELM_SESSIONS = (
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'helm' AND usename = 'helm_ro' "
    "AND datname = 'helm';"
)


async def test_an_idle_pooled_connection_holds_no_lock_and_no_snapshot(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    queries = {"q": {"sql": "SELECT * FROM items"}}
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        pid = (await run_sql(w.broker, prof, "SELECT pg_backend_pid()"))["data"]["rows"][0][0]
        assert (await w.call("q"))["ok"] is True
        held = admin(
            postgres_server,
            "\\pset format unaligned\n\\pset tuples_only on\n"
            "SELECT a.backend_xmin IS NULL, a.backend_xid IS NULL, (SELECT count(*) FROM pg_locks l "
            "WHERE l.pid = a.pid AND l.locktype <> 'virtualxid') "
            f"FROM pg_stat_activity a WHERE a.pid = {pid};",
        )
    assert held.strip() == "t|t|0"  # waiting in BEGIN: no snapshot, no transaction id, no lock


async def test_a_kept_statement_that_a_query_deallocated_is_prepared_again(
    tmp_path: Path, postgres_server: DatabaseServer
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    queries = {"items": {"sql": "SELECT name FROM items WHERE qty >= $1 ORDER BY id", "params": ["min"]},
               "drop": {"sql": "DEALLOCATE ALL"}}  # fmt: skip
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        first = await w.call("items", {"min": 1})
        dropped = await w.call("drop")
        again = await w.call("items", {"min": 1})
    assert dropped["ok"] is True, dropped
    assert again["data"] == first["data"]


async def test_a_kept_statement_follows_a_schema_change(
    tmp_path: Path, postgres_server: DatabaseServer, scratch: str
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    queries = {"labels": {"sql": f"SELECT * FROM {scratch} ORDER BY id"}}
    async with db_world(tmp_path, "postgres", queries, profile=prof, password=pw) as w:
        before = await w.call("labels")
        admin(postgres_server, f"ALTER TABLE {scratch} ADD COLUMN extra int DEFAULT 7;")
        after = await w.call("labels")
    assert before["data"]["columns"] == ["id", "label"]
    assert after["data"]["columns"] == ["id", "label", "extra"], after
    assert after["data"]["rows"] == [[1, "one", 7], [2, "two", 7]]


async def test_a_warm_read_is_one_round_trip_and_a_failed_one_leaves_the_session_clean(
    postgres_server: DatabaseServer,
) -> None:
    relay = Relay(postgres_server.port)
    await relay.start()
    prof, pw = server_profile(postgres_server, "helm_ro")
    engine = PostgresEngine(DbProfile(**{**prof.__dict__, "port": relay.port}), pw)
    try:
        pid = (await engine.read("SELECT pg_backend_pid()", []))["rows"]
        before = relay.round_trips
        again = (await engine.read("SELECT pg_backend_pid()", []))["rows"]
        trips = relay.round_trips - before
        with pytest.raises(pg_engine.CallError):  # fails on the server, after its BEGIN
            await engine.read("SELECT 1 / (pg_advisory_lock(7) IS NULL)::int", [])
        after = await engine.read(
            "SELECT pg_backend_pid(), current_setting('transaction_read_only'), "
            "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())",
            [],
        )
    finally:
        await engine.aclose()
        await relay.stop()
    assert trips == 1  # the statement and the message that ends the call, in one flush
    assert again == pid
    assert after["rows"] == [[pid[0][0], "on", "0"]]  # the same session: read-only, its lock released


async def test_a_connection_whose_next_transaction_is_not_read_only_is_dropped(
    postgres_server: DatabaseServer,
) -> None:
    prof, pw = server_profile(postgres_server, "helm_ro")
    engine = PostgresEngine(prof, pw)
    probe = "SELECT pg_backend_pid(), current_setting('transaction_read_only')"
    try:
        first = (await engine.read(probe, []))["rows"]
        session = engine._pool._idle[0][0]
        # Out of band: the pooled connection now waits in a read-write transaction, which the
        # ROLLBACK AND CHAIN after its next read would carry on into the one after.
        await session.conn.execute("ROLLBACK; BEGIN READ WRITE")
        await engine.read(probe, [])
        kept = len(engine._pool._idle)
        after = (await engine.read(probe, []))["rows"]
    finally:
        await engine.aclose()
    assert first[0][1] == "on"
    assert kept == 0  # the release check failed on the chained transaction: not given back
    assert after[0][1] == "on"
    assert after[0][0] != first[0][0]  # a new session
