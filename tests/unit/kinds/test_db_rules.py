"""Manifest rules of the db kind, the SQL scan behind them, and the pure value helpers."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from broker.errors import CallError
from broker.kinds.db import rules
from broker.kinds.db.engine import scrub
from broker.kinds.db.sqlscan import scan
from broker.kinds.db.values import RowBudget, bind_args, plain, to_json
from broker.manifest import validate
from tests.helpers import manifest_dict


def issues(engine: str, query: dict[str, Any], *, write: bool = False) -> list[tuple[str, str]]:
    conn = {"id": "app", "kind": "db", "service": "main", "engine": engine, "queries": {"q": query}}
    return [(i.path, i.message) for i in validate(manifest_dict([conn], write=write))]


@pytest.mark.parametrize(
    ("engine", "query", "path", "fragment"),
    [
        pytest.param("sqlite", {"sql": "SELECT 'open"}, "sql", "unterminated", id="unterminated"),
        pytest.param("sqlite", {"sql": "SELECT 1; SELECT 2"}, "sql", "exactly one statement", id="two"),
        pytest.param("sqlite", {"sql": "SELECT :name", "params": ["name"]}, "sql", "named", id="named"),
        pytest.param("sqlite", {"sql": "SELECT ?", "params": []}, "params", "1 ? placeholder", id="count"),
        pytest.param("postgres", {"sql": "SELECT $2", "params": ["a", "b"]}, "params", "$1", id="pg-gap"),
        pytest.param("mysql", {"sql": "DELETE FROM t"}, "sql", "must start with", id="mysql-write"),
        pytest.param("mysql", {"sql": "SELECT 1 INTO @x"}, "sql", "INTO", id="mysql-into"),
        pytest.param(
            "mysql", {"sql": "SELECT 1 /*!, sleep(1) */"}, "sql", "executable", id="mysql-exec-comment"
        ),
    ],
)
def test_each_rule_reports_its_problem_at_the_querys_path(
    engine: str, query: dict[str, Any], path: str, fragment: str
) -> None:
    found = issues(engine, query)
    assert any(p == f"$.connections[0].queries.q.{path}" and fragment in m for p, m in found), found


TRIGGER = "CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END"
MYSQL_QUOTES = "SELECT 'it''s;', \"a\\\"?\" FROM t WHERE a = ?"


@pytest.mark.parametrize(
    ("engine", "query", "write"),
    [
        pytest.param("sqlite", {"sql": "SELECT ? || '?' -- ?\n", "params": ["a"]}, False, id="quoted-marks"),
        pytest.param("sqlite", {"sql": TRIGGER, "write": True}, True, id="trigger-body"),
        pytest.param("postgres", {"sql": "SELECT $$;$$, $1, $1", "params": ["a"]}, False, id="dollar-quote"),
        pytest.param("mysql", {"sql": MYSQL_QUOTES, "params": ["a"]}, False, id="mysql-quotes"),
        pytest.param("mysql", {"sql": "UPDATE t SET a = ?", "params": ["a"], "write": True}, True, id="w"),
        pytest.param("mysql", {"sql": "WITH x AS (SELECT 1) SELECT * FROM x"}, False, id="mysql-with"),
    ],
)  # fmt: skip
def test_valid_queries_pass(engine: str, query: dict[str, Any], write: bool) -> None:
    assert issues(engine, query, write=write) == []


def test_review_shows_each_querys_sql_and_marks_writes() -> None:
    conn = {"id": "app", "kind": "db", "service": "main", "engine": "sqlite",
            "queries": {"r": {"sql": "SELECT 1"}, "w": {"sql": "DELETE FROM t", "write": True}}}  # fmt: skip
    review = rules.review(rules.parse(conn))
    assert review.target == "database main (sqlite)"
    assert [(i.detail, i.write) for i in review.items] == [("SELECT 1", False), ("DELETE FROM t", True)]


def test_mysql_placeholders_are_counted_only_outside_strings_and_comments() -> None:
    assert scan("SELECT '?', ? /* ? */, `a?b`, ? -- ?\n", "mysql").placeholders == ("?", "?")


def test_arguments_bind_in_params_order() -> None:
    assert bind_args(["b", "a"], {"a": 1, "b": None}) == [None, 1]
    with pytest.raises(CallError):
        bind_args(["a"], {"a": float("nan")})


def test_values_follow_the_contract_types() -> None:
    assert to_json(b"\x00\xff") == "AP8="
    assert to_json(Decimal("1.10")) == "1.10"
    assert to_json(2**53) == str(2**53)
    assert to_json(7, big=True) == "7"
    assert to_json(dt.date(2024, 1, 2)) == "2024-01-02"
    assert to_json(dt.timedelta(days=-1, seconds=3600)) == "-P0DT23H0M0S"
    assert to_json(float("inf")) == "inf"


def test_the_row_budget_refuses_the_1001st_row() -> None:
    budget = RowBudget(["n"], [plain])
    budget.add_all([i] for i in range(1000))
    with pytest.raises(CallError) as info:
        budget.add([1000])
    assert info.value.code.value == "too_many_rows"


@pytest.mark.parametrize(
    ("width", "fits"),
    [pytest.param(1040, True, id="just-under-1-MiB"), pytest.param(1050, False, id="just-over-1-MiB")],
)
def test_the_row_budget_measures_1_mib_as_the_exact_json(width: int, fits: bool) -> None:
    budget = RowBudget(["id", "text"], [plain, plain])
    rows = ([i, "é" * (width // 2)] for i in range(1000))  # two UTF-8 bytes a character
    if fits:
        budget.add_all(rows)
        assert len(budget.rows) == 1000
    else:
        with pytest.raises(CallError) as info:
            budget.add_all(rows)
        assert info.value.code.value == "too_large"


def test_scrub_removes_hosts_and_passwords_in_any_case() -> None:
    message = "could not connect to DB.Example.org:5432 with password s3cret (db.example.org)"
    cleaned = scrub(message, ["db.example.org", "s3cret", None])
    assert "example" not in cleaned.lower()
    assert "s3cret" not in cleaned


@pytest.mark.parametrize(
    ("engine", "sql", "message"),
    [
        pytest.param(
            "sqlite", "SELECT * FROM t WHERE a = $1", "`$1` is PostgreSQL syntax; SQLite uses ?", id="sqlite"
        ),
        pytest.param(
            "mysql", "SELECT * FROM t WHERE a = $1", "`$1` is PostgreSQL syntax; MySQL uses ?", id="mysql"
        ),
        pytest.param(
            "postgres",
            "SELECT * FROM t WHERE a = ?",
            "`?` is SQLite and MySQL syntax; PostgreSQL uses $1, $2…",
            id="postgres",
        ),
    ],
)
def test_a_placeholder_of_another_engine_is_named_with_the_one_to_use(
    engine: str, sql: str, message: str
) -> None:
    assert issues(engine, {"sql": sql, "params": ["a"]}) == [("$.connections[0].queries.q.sql", message)]


def test_a_question_mark_beside_numbered_placeholders_is_postgres_jsonb_and_fine() -> None:
    assert issues("postgres", {"sql": "SELECT * FROM t WHERE doc ? 'key' AND a = $1", "params": ["a"]}) == []


def test_the_engines_placeholder_hint_comes_only_with_placeholder_problems() -> None:
    found = dict(issues("sqlite", {"sql": "SELECT ?; SELECT ?", "params": []}))
    assert found["$.connections[0].queries.q.sql"] == "must be exactly one statement (found 2)"
    assert found["$.connections[0].queries.q.params"] == (
        "the SQL has 2 ? placeholder(s) but params names 0 (SQLite uses ?)"
    )
