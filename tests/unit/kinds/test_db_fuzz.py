"""Property-based, differential tests of the db kind's read-only guards against the real engines.

* MySQL: statements built from a grammar of tokens (comments of every kind, quotes, numbers glued
  to words, INTO OUTFILE/DUMPFILE/@var, executable comments, locking reads, procedures,
  temporary tables). Whatever Helm's lint accepts as a read is then run by the administrator in
  a read-write session — where a write would succeed — and must change nothing: no exported
  file, no user variable, no temporary table, the same rows. The server must also agree with
  the scan on the number of placeholders, and say the statement returns rows.
* SQLite: hostile statements through Helm's read path leave the file and the session as they
  were; where SQLite prepares a statement, it counts the same placeholders as the scan.
* PostgreSQL: sequences of session-changing statements through Helm's read path, with a role
  that could write: no row changes, and the next call always finds a clean read-only session.

Hypothesis runs derandomized under CI (tests/conftest.py); the example counts keep the whole
file to a few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import secrets
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from broker.errors import CallError
from broker.kinds.db import mywire
from broker.kinds.db.mysql import MysqlEngine
from broker.kinds.db.mywire import PreparedStatement, ServerError, Wire
from broker.kinds.db.postgres import PostgresEngine
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.rules import sql_problems
from broker.kinds.db.sqlite import SqliteEngine
from broker.kinds.db.sqlscan import scan
from tests.servers.databases import DatabaseServer
from tests.unit.kinds.db_setup import server_profile

FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])

# -- MySQL ------------------------------------------------------------------------------------
MYSQL_STARTS = ["SELECT ", "WITH x AS (SELECT 1) SELECT ", "SHOW ", "EXPLAIN SELECT ", "DESC ", "VALUES ",
                "TABLE ", "(SELECT ", "CREATE TEMPORARY TABLE tt AS SELECT ", "DO ", "SET @v = ", "CALL p",
                "/*!SELECT*/ ", "-- x\nSELECT ", "# x\nSELECT "]  # fmt: skip
MYSQL_TOKENS = ["1", "1e1", "1.5", ".5", "0x1", "x'01'", "b'1'", "v", "a", "items", "canary", "INTO",
                "OUTFILE", "DUMPFILE", "@v", "'{f}'", '"{f}"', "FROM", "AS", ",", "(", ")", "=", "-", "+",
                "--", "-- ", "--\t", "--\x01", "#", "\n", "\r", "/*", "*/", "/*!", "/*M!", "/*!50000 ",
                "/*M!100000 ", "/*m!", "/*+ ", "'", '"', "`", "\\", "''", '""', "``", "?", ";", "FOR UPDATE",
                "LOCK IN SHARE MODE", "PROCEDURE ANALYSE()", "UNION SELECT", "WHERE", "LIMIT 1", "SLEEP(0)",
                "GET_LOCK('x', 0)", "CREATE TEMPORARY TABLE tt (a INT)", "UPDATE canary SET v = 0",
                "INTO @v", "INTO OUTFILE '{f}'", "N'a'", "_utf8mb4'a'", "@@version"]  # fmt: skip
# Something the scan might misread (a comment or string opener, a number glued to the next
# word), then a write or a placeholder, then something that might close what the server opened.
MYSQL_HIDERS = ["--", "--1", "1--", "1--'", "-- ", "--\t", "--\x7f", "#", "/*", "/*m!", "/*+", "`a\\`",
                "'a\\'", '"a\\"', "'a''", "1e1", "1.5", ".5", "0x1", "x'01'", "1INTO", "\\"]  # fmt: skip
MYSQL_PAYLOADS = ["INTO @v", ", ?"]
MYSQL_CLOSERS = ["", "-- `", "-- '", '-- "', "*/", "\n", "'", "`", '"', " # x"]
mysql_statements = st.one_of(
    st.builds(
        lambda hider, payload, closer: f"SELECT 1 {hider} {payload} {closer}",
        st.sampled_from(MYSQL_HIDERS),
        st.sampled_from([*MYSQL_PAYLOADS, "INTO OUTFILE '{f}'", "INTO DUMPFILE '{f}'"]),
        st.sampled_from(MYSQL_CLOSERS),
    ),
    st.builds(
        lambda start, tokens, glue: start + glue.join(tokens),
        st.sampled_from(MYSQL_STARTS),
        st.lists(st.sampled_from(MYSQL_TOKENS), max_size=10),
        st.sampled_from(["", " "]),
    ),
)


@dataclass
class MysqlAdmin:
    """A read-write session of the administrator (FILE privilege) on Helm's own protocol code."""

    loop: asyncio.AbstractEventLoop
    wire: Wire
    server: DatabaseServer
    engine: MysqlEngine

    def run(self, commands: list[bytes], reader: str = "ok") -> list[Any]:
        read = {"ok": self.wire.ok, "prepared": self.wire.prepared}
        steps = [(c, read[reader] if i == 0 else self.wire.ok) for i, c in enumerate(commands)]
        return self.loop.run_until_complete(self.wire.exchange(steps))

    def query(self, sql: str) -> Any:
        steps = [(mywire.query(sql), lambda: self.wire.rows(binary=False))]
        [reply] = self.loop.run_until_complete(self.wire.exchange(steps))
        return reply

    def effects(self) -> tuple[Any, ...]:
        """What a write would leave behind: exported files, rows, a user variable, a temporary table."""
        assert self.server.file_dir is not None
        files = tuple(sorted(os.listdir(self.server.file_dir)))
        rows = self.query("SELECT COUNT(*), SUM(v) FROM helm.canary")["rows"]
        variable = self.query("SELECT @v")["rows"]
        temp = self.query("SELECT 1 FROM tt")
        return files, rows, variable, isinstance(temp, ServerError)


@pytest.fixture(scope="module")
def mysql_admin(mariadb_server: DatabaseServer) -> Iterator[MysqlAdmin]:
    mariadb_server.admin_sql(
        "CREATE TABLE IF NOT EXISTS helm.canary (v INT); DELETE FROM helm.canary;"
        "INSERT INTO helm.canary VALUES (1), (2);"
        "CREATE PROCEDURE IF NOT EXISTS helm.p() SELECT 1;"
    )
    loop = asyncio.new_event_loop()
    prof, pw = server_profile(mariadb_server, "helm_admin")
    engine = MysqlEngine(prof, pw)
    try:
        conn, wire = loop.run_until_complete(engine._sign_in())
        admin = MysqlAdmin(loop, wire, mariadb_server, engine)
        admin.run([mywire.query("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'")])
        yield admin
        conn.close()
        loop.run_until_complete(asyncio.sleep(0))  # one turn of the loop lets the transport close its socket
    finally:
        loop.close()


def _disagreement(admin: MysqlAdmin, sql: str) -> str | None:
    """Where the scan and MariaDB read ``sql`` differently (prepared, never run), or None."""
    s = scan(sql, "mysql")
    if s.unterminated or s.statements != 1:
        return None
    [prepared] = admin.run([mywire.prepare(sql)], reader="prepared")
    if not isinstance(prepared, PreparedStatement):
        return None
    if prepared.params != len(s.placeholders):
        return f"{sql!r}: the server sees {prepared.params} placeholder(s), the scan {len(s.placeholders)}"
    if not list(sql_problems(sql, "mysql", ["p"] * prepared.params)) and prepared.columns == 0:
        return f"{sql!r}: accepted as a read, but it returns no rows (INTO, or not a query)"
    return None


def test_the_scan_and_mariadb_agree_on_every_comment_quote_and_number_edge(mysql_admin: MysqlAdmin) -> None:
    found = [
        problem
        for hider, glue, payload, closer in itertools.product(
            MYSQL_HIDERS, ["", " "], MYSQL_PAYLOADS, MYSQL_CLOSERS
        )
        if (problem := _disagreement(mysql_admin, f"SELECT 1 {hider}{glue}{payload} {closer}"))
    ]
    assert found == []


@FUZZ
@given(template=mysql_statements)
@example(template="SELECT 1--1 INTO OUTFILE '{f}'")
@example(template="SELECT 1 AS `a\\` INTO OUTFILE '{f}' -- `")
@example(template="SELECT 1e1INTO @v")
@example(template="SELECT 1.5INTO DUMPFILE '{f}'")
@example(template="SELECT 1--'\n, ? -- '")
def test_what_lint_accepts_as_a_mysql_read_writes_nothing_even_where_writes_are_allowed(
    mysql_admin: MysqlAdmin, template: str
) -> None:
    assert mysql_admin.server.file_dir is not None
    sql = template.replace("{f}", f"{mysql_admin.server.file_dir}/f{secrets.token_hex(3)}")
    assert _disagreement(mysql_admin, sql) is None
    placeholders = len(scan(sql, "mysql").placeholders)
    if list(sql_problems(sql, "mysql", ["p"] * placeholders)):
        return  # refused as a read: nothing runs
    before = mysql_admin.effects()
    [prepared] = mysql_admin.run([mywire.prepare(sql)], reader="prepared")
    if isinstance(prepared, PreparedStatement):
        steps = [(mywire.execute(prepared.statement_id, ["x"] * placeholders), mysql_admin.wire.affected)]
        mysql_admin.loop.run_until_complete(mysql_admin.wire.exchange(steps))
    after = mysql_admin.effects()
    mysql_admin.run([mywire.reset(), mywire.query("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'")])
    assert after == before, sql


# -- SQLite -----------------------------------------------------------------------------------
SQLITE_STATEMENTS = [
    "ATTACH '{dir}/x.db' AS x", "attach/**/'{dir}/y.db' as y", "VACUUM INTO '{dir}/c.db'", "VACUUM",
    "PRAGMA user_version = 7", "PRAGMA query_only = 0", "PRAGMA journal_mode = DELETE", "DETACH x",
    "CREATE TEMP TABLE t (a)", "CREATE TEMP VIEW v AS SELECT 1", "INSERT INTO items VALUES (9)",
    "REPLACE INTO items VALUES (1)", "WITH x AS (SELECT 1) INSERT INTO items SELECT * FROM x",
    "DELETE FROM items", "SELECT load_extension('{dir}/e')", "BEGIN IMMEDIATE", "SAVEPOINT s",
    "SELECT * FROM items", "SELECT ?, '?', [a?b] FROM items", "PRAGMA table_info(items)",
    "SELECT * FROM pragma_database_list", "CREATE TEMP TRIGGER g AFTER INSERT ON items BEGIN SELECT 1; END",
    "SELECT $a", "SELECT -- ?\n?", "SELECT /* ? */ ?",
]  # fmt: skip


@pytest.fixture(scope="module")
def sqlite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "app.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE items (v INTEGER); INSERT INTO items VALUES (1), (2);")
    conn.close()
    return path


def _digest(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _sqlite_placeholders(sql: str) -> int | None:
    """How many parameters SQLite itself counts in ``sql`` (None: it does not prepare it).

    sqlite3 checks the number of bindings after preparing and before running a statement, so
    a wrong number of them makes it say the right one without running anything.
    """
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE items (v INTEGER)")
        conn.execute(sql, [0] * 999)
    except sqlite3.ProgrammingError as exc:
        found = re.search(r"uses (\d+)", str(exc))
        return int(found.group(1)) if found else None
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    raise AssertionError(f"SQLite ran {sql!r} with 999 arguments")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statements=st.lists(st.sampled_from(SQLITE_STATEMENTS), min_size=1, max_size=3))
def test_sqlite_reads_leave_the_file_and_the_session_as_they_were(
    sqlite_file: Path, statements: list[str]
) -> None:
    folder = sqlite_file.parent
    before = _digest(folder)
    engine = SqliteEngine(str(sqlite_file))
    loop = asyncio.new_event_loop()
    try:
        for template in statements:
            sql = template.format(dir=folder)
            s = scan(sql, "sqlite")
            counted = _sqlite_placeholders(sql)
            if counted is not None and not s.named:
                assert len(s.placeholders) == counted, sql
            with contextlib.suppress(CallError):
                loop.run_until_complete(engine.read(sql, [1] * len(s.placeholders)))
        temp = loop.run_until_complete(engine.read("SELECT count(*) FROM sqlite_temp_master", []))
    finally:
        loop.run_until_complete(engine.aclose())
        loop.close()
    assert temp["rows"] == [[0]]
    assert _digest(folder) == before


# -- PostgreSQL -------------------------------------------------------------------------------
PG_STATEMENTS = [
    "SELECT set_config('search_path', 'nowhere', false)", "SET statement_timeout = 0", "SET ROLE NONE",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", "SET TRANSACTION READ WRITE",
    "SELECT set_config('default_transaction_read_only', 'off', false)", "SELECT pg_advisory_lock(7)",
    "SELECT pg_try_advisory_lock_shared(8)", "PREPARE p AS SELECT 1", "LISTEN chan", "DEALLOCATE ALL",
    "DO $$ BEGIN EXECUTE 'PREPARE q AS SELECT 1'; END $$", "DECLARE c CURSOR WITH HOLD FOR SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1", "SELECT nextval('items_id_seq')", "UPDATE items SET qty = qty + 1",
    "COMMIT", "ROLLBACK", "COMMIT AND CHAIN", "BEGIN", "DO $$ BEGIN UPDATE items SET qty = 0; END $$",
    "WITH x AS (UPDATE items SET qty = 0 RETURNING 1) SELECT * FROM x", "SELECT qty FROM items WHERE id = $1",
    "SELECT 1",
]  # fmt: skip
PG_CLEAN_SQL = (
    "SELECT current_setting('search_path'), current_setting('statement_timeout'), "
    "current_setting('transaction_read_only'), current_setting('default_transaction_read_only'), "
    "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()), "
    "(SELECT count(*) FROM pg_prepared_statements WHERE from_sql), (SELECT count(*) FROM pg_cursors), "
    "(SELECT count(*) FROM pg_listening_channels()), (SELECT sum(qty) FROM items)"
)


@pytest.fixture(scope="module")
def pg_engine(postgres_server: DatabaseServer) -> Iterator[tuple[asyncio.AbstractEventLoop, PostgresEngine]]:
    loop = asyncio.new_event_loop()
    prof, pw = server_profile(postgres_server, "helm_rw")
    engine = PostgresEngine(DbProfile(**{**prof.__dict__, "name": "fuzz"}), pw)
    try:
        yield loop, engine
    finally:
        loop.run_until_complete(engine.aclose())
        loop.close()


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statements=st.lists(st.sampled_from(PG_STATEMENTS), min_size=1, max_size=3))
def test_postgres_reads_change_no_row_and_the_next_call_finds_a_clean_read_only_session(
    pg_engine: tuple[asyncio.AbstractEventLoop, PostgresEngine], statements: list[str]
) -> None:
    loop, engine = pg_engine
    clean = loop.run_until_complete(engine.read(PG_CLEAN_SQL, []))["rows"]
    for sql in statements:
        placeholders = {p for p in scan(sql, "postgres").placeholders}
        with contextlib.suppress(CallError):
            loop.run_until_complete(engine.read(sql, [1] * len(placeholders)))
        after = loop.run_until_complete(engine.read(PG_CLEAN_SQL, []))["rows"]
        assert after == clean, (sql, after)
