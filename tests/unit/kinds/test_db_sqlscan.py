"""The SQL scan follows each engine's own lexical rules (what MariaDB itself does is checked in
test_db_fuzz.py against the real server)."""

from __future__ import annotations

import pytest

from broker.kinds.db.rules import read_problem, sql_problems
from broker.kinds.db.sqlscan import scan


@pytest.mark.parametrize(
    "sql",
    [
        # MySQL starts a -- comment only when whitespace or a control character follows.
        pytest.param("SELECT 1--1 INTO OUTFILE '/tmp/f'", id="dash-dash-then-digit"),
        pytest.param("SELECT 1--'x' INTO @v", id="dash-dash-then-quote"),
        # Backticks have no backslash escapes: `a\` is a whole identifier.
        pytest.param("SELECT 1 AS `a\\` INTO OUTFILE '/tmp/f' -- `", id="backslash-ends-backticks"),
        # A number ends where MySQL's lexer ends it, and the next word starts there.
        pytest.param("SELECT 1e1INTO @v", id="exponent-glued"),
        pytest.param("SELECT 1.5INTO DUMPFILE '/tmp/f'", id="decimal-glued"),
        pytest.param("SELECT .5INTO @v", id="leading-point-glued"),
        pytest.param("SELECT x'01'INTO @v", id="hex-string-glued"),
        pytest.param("SELECT 1 #x\n INTO @v", id="hash-comment-ends-at-newline"),
    ],
)
def test_a_mysql_read_that_writes_with_into_is_seen(sql: str) -> None:
    problem = read_problem(sql, "mysql")
    assert problem is not None and "INTO" in problem


@pytest.mark.parametrize(
    "sql",
    [
        pytest.param("SELECT 1--\tINTO @v", id="dash-dash-tab-is-a-comment"),
        pytest.param("SELECT 1--\x01INTO @v", id="dash-dash-control-is-a-comment"),
        pytest.param("SELECT 1 -- INTO @v", id="dash-dash-space-is-a-comment"),
        pytest.param("SELECT 1 # INTO @v", id="hash-comment"),
        pytest.param("SELECT 1 #x\r INTO @v", id="carriage-return-does-not-end-a-comment"),
        pytest.param("SELECT 1 /* INTO @v */", id="block-comment"),
        pytest.param("SELECT 1 /*m! INTO @v */", id="lower-case-m-is-a-plain-comment"),
        pytest.param("SELECT 1INTO", id="digit-led-identifier"),
        pytest.param("SELECT 0x1INTO", id="hex-led-identifier"),
        pytest.param("SELECT 'a\\' INTO @v'", id="backslash-escaped-quote"),
        pytest.param('SELECT "it"" INTO @v"', id="doubled-quote"),
    ],
)
def test_into_inside_comments_strings_and_identifiers_is_not_a_keyword(sql: str) -> None:
    assert read_problem(sql, "mysql") is None


@pytest.mark.parametrize(
    "sql",
    [
        pytest.param("SELECT 1 /*! INTO @v */", id="executable"),
        pytest.param("SELECT 1 /*!50000 , 2 */", id="versioned"),
        pytest.param("SELECT 1 /*M!100000 , 2 */", id="mariadb-versioned"),
        pytest.param("SELECT 1 /*M! , 2 */", id="mariadb"),
    ],
)
def test_executable_comments_are_refused_in_reads(sql: str) -> None:
    problem = read_problem(sql, "mysql")
    assert problem is not None and "executable" in problem


@pytest.mark.parametrize(
    ("sql", "count"),
    [
        pytest.param("SELECT 1--'\n, ? -- '", 0, id="dash-dash-quote-opens-a-string"),
        pytest.param("SELECT `a\\`, ?", 1, id="backticks-without-escapes"),
        pytest.param("SELECT 'it\\'s ?', ?", 1, id="escaped-quote"),
        pytest.param('SELECT "a""?", ?', 1, id="doubled-double-quote"),
        pytest.param("SELECT ? /*! , ? */", 2, id="executable-comment-is-code"),
        pytest.param("SELECT ? # ?\n, ?", 2, id="hash-comment"),
    ],
)
def test_mysql_placeholders_are_counted_where_the_server_sees_them(sql: str, count: int) -> None:
    assert len(scan(sql, "mysql").placeholders) == count


def test_a_mysql_write_sees_load_data_local_inside_an_executable_comment() -> None:
    s = scan("/*!LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE t */", "mysql")
    assert s.first_words[:1] == ("LOAD",)
    assert "LOCAL" in s.words
    assert s.executable


def test_statements_split_only_where_mysql_splits_them() -> None:
    assert scan("SELECT 1--1; SELECT 2", "mysql").statements == 2
    assert scan("SELECT 1 -- ; SELECT 2", "mysql").statements == 1


@pytest.mark.parametrize("engine", ["sqlite", "postgres", "mysql"])
def test_sql_with_a_nul_character_is_refused(engine: str) -> None:
    problems = list(sql_problems("SELECT 1\x00", engine, []))
    assert any("NUL" in message for _field, message in problems)


@pytest.mark.parametrize(
    ("sql", "engine", "placeholders"),
    [
        pytest.param("SELECT E'\\'$2', $1", "postgres", ("$1",), id="pg-escape-string"),
        pytest.param("SELECT /* /* */ $2; */ $1", "postgres", ("$1",), id="pg-nested-comment"),
        pytest.param("SELECT [a;?], ?", "sqlite", ("?",), id="sqlite-brackets"),
    ],
)
def test_other_engines_quote_and_comment_as_their_server_does(
    sql: str, engine: str, placeholders: tuple[str, ...]
) -> None:
    s = scan(sql, engine)
    assert (s.placeholders, s.statements, s.unterminated) == (placeholders, 1, False)
