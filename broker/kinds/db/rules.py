"""``db`` connections: the typed model, manifest rules and review (no I/O)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from broker.kinds.base import Connection, ConnectionReview, Issue, ReviewItem
from broker.kinds.db.sqlscan import Scan, scan
from broker.templates import unused_arguments

ENGINES = {"sqlite": "SQLite", "mysql": "MySQL", "postgres": "PostgreSQL"}


@dataclass(frozen=True)
class Query:
    """One named statement: its SQL, the call arguments bound to its placeholders, in order."""

    sql: str
    params: tuple[str, ...]
    write: bool


@dataclass(frozen=True)
class DbConnection(Connection):
    service: str
    engine: str
    queries: Mapping[str, Query]

    @property
    def profile(self) -> str:
        return self.service


def operations(conn: Mapping[str, Any]) -> dict[str, bool]:
    return {name: bool(q.get("write", False)) for name, q in conn["queries"].items()}


def parse(conn: Mapping[str, Any]) -> DbConnection:
    queries = {
        name: Query(str(q["sql"]), tuple(q.get("params", [])), bool(q.get("write", False)))
        for name, q in conn["queries"].items()
    }
    return DbConnection(
        id=str(conn["id"]),
        kind=str(conn["kind"]),
        operations=operations(conn),
        service=str(conn["service"]),
        engine=str(conn["engine"]),
        queries=queries,
    )


MYSQL_READ_STARTS = ("SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "VALUES", "TABLE")


@functools.lru_cache(maxsize=256)
def read_problem(sql: str, engine: str) -> str | None:
    """Why a read query cannot run read-only on ``engine`` as written, or None.

    MySQL lets a read-only transaction write temporary tables, and ``SELECT … INTO OUTFILE``
    writes a file on the server, so a MySQL read must be a plain query: it starts with one of
    ``MYSQL_READ_STARTS``, has no INTO and no executable comment (``/*! … */`` runs its content
    only on some server versions, so what it does cannot be known from the text alone).
    Kept per SQL text (an extension's queries repeat): the answer depends on nothing else.
    """
    if engine != "mysql":
        return None
    s = scan(sql, engine)
    if s.executable:
        return "MySQL executable comments (/*! … */, /*M! … */) are not allowed in read queries"
    if not s.first_words or s.first_words[0] not in MYSQL_READ_STARTS:
        return f"a MySQL read query must start with {', '.join(MYSQL_READ_STARTS)}"
    if "INTO" in s.words:
        return "a read query must not use INTO (OUTFILE, DUMPFILE or variables)"
    return None


def sql_problems(
    sql: str, engine: str, params: list[str], *, write: bool = False
) -> Iterator[tuple[str, str]]:
    """(field, message) for each problem of one query's SQL against its params."""
    if "\x00" in sql:
        yield "sql", "contains a NUL character"
        return
    s = scan(sql, engine)
    if s.unterminated:
        yield "sql", "has an unterminated string, identifier or comment"
        return
    problem = None if write else read_problem(sql, engine)
    if problem is not None:
        yield "sql", problem
    if s.statements != 1:
        yield "sql", f"must be exactly one statement (found {s.statements})"
    if s.named:
        yield "sql", "use ? placeholders; named and numbered parameters are not supported (SQLite uses ?)"
    yield from _placeholder_problems(s, engine, params)


def _placeholder_problems(s: Scan, engine: str, params: list[str]) -> Iterator[tuple[str, str]]:
    """Placeholders against ``params``, naming a placeholder of another engine when there is one."""
    name = ENGINES[engine]
    if engine != "postgres":
        if s.foreign:
            yield "sql", f"`{s.foreign[0]}` is PostgreSQL syntax; {name} uses ?"
            if not s.placeholders:
                return  # that is why the count is off: saying so twice helps no one
        if len(s.placeholders) != len(params):
            found = len(s.placeholders)
            yield (
                "params",
                f"the SQL has {found} ? placeholder(s) but params names {len(params)} ({name} uses ?)",
            )
        return
    used = {int(p[1:]) for p in s.placeholders}
    if used == set(range(1, len(params) + 1)):
        return
    if not used and "?" in s.foreign:
        yield "sql", "`?` is SQLite and MySQL syntax; PostgreSQL uses $1, $2…"
        return
    shown = ", ".join(f"${u}" for u in sorted(used)) or "no placeholders"
    numbered = f"$1…${len(params)}" if params else "$1, $2… (one per name in params)"
    yield (
        "params",
        f"the SQL uses {shown} but params names {len(params)} argument(s); use {numbered} each once at least",
    )


def lint(conn: Mapping[str, Any], path: str, manifest: Mapping[str, Any]) -> Iterator[Issue]:
    """Each query's SQL against its params and the connection's engine (a NUL character is the
    schema's to report: the SQL is not read then)."""
    engine, queries = conn.get("engine"), conn.get("queries")
    if engine not in ENGINES or not isinstance(queries, dict):
        return
    for name, query in queries.items():
        sql = query.get("sql") if isinstance(query, dict) else None
        params = query.get("params", []) if isinstance(query, dict) else None
        if not isinstance(sql, str) or "\x00" in sql or not isinstance(params, list):
            continue
        write = query.get("write") is True
        for field, message in sql_problems(sql, engine, [str(p) for p in params], write=write):
            yield Issue(f"{path}.queries.{name}.{field}", message)


def hints(conn: DbConnection, operation: str, args: Mapping[str, Any]) -> tuple[str, ...]:
    """Arguments the query's ``params`` do not name (author mode shows them)."""
    query = conn.queries.get(operation)
    if query is None:
        return ()
    return unused_arguments(args, query.params, f"the params of query {operation!r}")


def review(conn: DbConnection) -> ConnectionReview:
    items = []
    for name, q in conn.queries.items():
        params = ", ".join(q.params) or "no arguments"
        items.append(ReviewItem(f"query {name} ({params})", q.sql, q.write))
    return ConnectionReview(conn.id, "db", f"database {conn.service} ({conn.engine})", tuple(items))
