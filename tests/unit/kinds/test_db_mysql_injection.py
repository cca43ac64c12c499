"""MySQL shapes that once got past Helm, on the real MariaDB server.

Each shape hides SQL from a scan that does not lex as the server does: an INTO that writes a
server file from a read, or a ``?`` argument that the server would read as SQL. The file checks
run as the administrator (who holds the FILE privilege) against the server's export folder.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.kinds.db.rules import sql_problems
from tests.servers.databases import DatabaseServer
from tests.unit.kinds.db_setup import db_world, mysql_labels, mysql_scratch, run_sql, server_profile


def export_path(db: DatabaseServer) -> Path:
    assert db.file_dir is not None
    return Path(db.file_dir) / f"sneaky-{secrets.token_hex(4)}.txt"


READS_THAT_WRITE_A_FILE = {
    "dash-dash-then-digit": "SELECT 1--1 INTO OUTFILE '{f}'",
    "backslash-ends-backticks": "SELECT 1 AS `a\\` INTO OUTFILE '{f}' -- `",
    "exponent-glued-to-into": "SELECT 1e1INTO OUTFILE '{f}'",
    "decimal-glued-to-into": "SELECT 1.5INTO DUMPFILE '{f}'",
}


@pytest.mark.parametrize("shape", sorted(READS_THAT_WRITE_A_FILE))
async def test_a_read_hiding_into_is_refused_by_lint_and_at_run_time_and_writes_no_file(
    tmp_path: Path, mariadb_server: DatabaseServer, shape: str
) -> None:
    target = export_path(mariadb_server)
    sql = READS_THAT_WRITE_A_FILE[shape].format(f=target)
    prof, pw = server_profile(mariadb_server, "helm_admin")
    async with db_world(tmp_path, "mysql", {"q": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        result = await run_sql(w.broker, prof, sql)
    assert not target.exists()
    assert result["error"]["code"] == "refused", result
    assert any("INTO" in message for _field, message in sql_problems(sql, "mysql", []))


@pytest.fixture
def server_sql_mode(mariadb_server: DatabaseServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """The server's global sql_mode with one more flag, for connections opened during the test."""
    mode: str = request.param
    before = mariadb_server.admin_sql("SELECT @@GLOBAL.sql_mode;").strip().splitlines()[-1]
    mariadb_server.admin_sql(f"SET GLOBAL sql_mode = '{before},{mode}';")
    try:
        yield mode
    finally:
        mariadb_server.admin_sql(f"SET GLOBAL sql_mode = '{before}';")


SQL_MODE_SHAPES = {
    # Without backslash escapes the string ends at \' and INTO is code.
    "NO_BACKSLASH_ESCAPES": "SELECT 'a\\' INTO OUTFILE \"{f}\" -- '",
    # With ANSI_QUOTES "…" is an identifier, which has no backslash escapes.
    "ANSI_QUOTES": 'SELECT 1 AS "a\\" INTO OUTFILE \'{f}\' -- "',
}


@pytest.mark.parametrize("server_sql_mode", sorted(SQL_MODE_SHAPES), indirect=True)
async def test_a_server_sql_mode_cannot_change_how_a_read_is_lexed(
    tmp_path: Path, mariadb_server: DatabaseServer, server_sql_mode: str
) -> None:
    target = export_path(mariadb_server)
    sql = SQL_MODE_SHAPES[server_sql_mode].format(f=target)
    prof, pw = server_profile(mariadb_server, "helm_admin")
    assert list(sql_problems(sql, "mysql", [])) == []  # to Helm's lint, INTO is inside a string
    async with db_world(tmp_path, "mysql", {"q": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        result = await run_sql(w.broker, prof, sql)
    assert result["ok"] is True, result  # the server read it the same way: one string, no INTO
    assert not target.exists()


async def test_an_argument_after_a_dash_dash_quote_stays_data_in_a_read(
    tmp_path: Path, mariadb_server: DatabaseServer
) -> None:
    # The server reads '\n, ? AS b -- ' as one string: the statement has no placeholder at all.
    sql = "SELECT 1--'\n, ? AS b -- '"
    prof, pw = server_profile(mariadb_server, "helm_ro")
    async with db_world(tmp_path, "mysql", {"q": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        result = await run_sql(w.broker, prof, sql, [", @@version AS leaked, 1 AS x #"])
    assert result["ok"] is False, result
    assert result["error"]["code"] == "refused"
    assert "leaked" not in str(result)


@pytest.fixture
def scratch(mariadb_server: DatabaseServer) -> str:
    return mysql_scratch(mariadb_server)


async def test_an_argument_after_a_dash_dash_quote_stays_data_in_a_write(
    tmp_path: Path, mariadb_server: DatabaseServer, scratch: str
) -> None:
    sql = f"UPDATE {scratch} SET label = ? WHERE id = 2--'\n OR id = ? -- '"
    prof, pw = server_profile(mariadb_server, "helm_rw")
    async with db_world(tmp_path, "mysql", {"q": {"sql": "SELECT 1"}}, profile=prof, password=pw) as w:
        result = await run_sql(w.broker, prof, sql, ["new", " OR 1=1 #"], write=True)
    assert result["error"]["code"] == "refused", result
    assert mysql_labels(mariadb_server, scratch) == "one,two"
