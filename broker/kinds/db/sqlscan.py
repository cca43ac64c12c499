"""A small lexical scan of SQL: placeholders and statement count, outside strings and comments.

It does not parse SQL; it only finds what lint must check — which placeholders a statement
uses and whether it holds more than one statement — while skipping quoted text, quoted
identifiers, comments and (PostgreSQL) dollar-quoted bodies. The engine itself is still the
judge at run time (one statement per protocol message, read-only transactions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_PG_PARAM = re.compile(r"\$([0-9]+)")
_SQLITE_NAMED = re.compile(r"[:@$][A-Za-z_]|\?[0-9]")


@dataclass(frozen=True)
class Scan:
    placeholders: tuple[str, ...]
    """Each placeholder in order: ``?`` or ``$n``."""
    statements: int
    named: bool
    """SQLite named or numbered parameters (``:x``, ``@x``, ``$x``, ``?1``) were used."""
    unterminated: bool


def scan(sql: str, engine: str) -> Scan:
    out: list[str] = []
    i, n = 0, len(sql)
    statements, content, named = 0, False, False
    mysql = engine == "mysql"
    while i < n:
        c = sql[i]
        if c in "'\"`":
            end = _skip_quoted(sql, i, c, backslash=mysql)
            if end < 0:
                return Scan(tuple(out), max(statements, 1), named, True)
            i, content = end, True
            continue
        if sql.startswith("--", i) or (mysql and c == "#"):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            if j < 0:
                return Scan(tuple(out), max(statements, 1), named, True)
            i = j + 2
            continue
        if engine == "postgres" and c == "$":
            m = _DOLLAR_TAG.match(sql, i)
            if m and not sql[i + 1 : i + 2].isdigit():
                j = sql.find(m.group(0), m.end())
                if j < 0:
                    return Scan(tuple(out), max(statements, 1), named, True)
                i, content = j + len(m.group(0)), True
                continue
            p = _PG_PARAM.match(sql, i)
            if p:
                out.append(p.group(0))
                i, content = p.end(), True
                continue
        if engine == "sqlite" and _SQLITE_NAMED.match(sql, i):
            named = True
        if c == "?" and engine in ("sqlite", "mysql"):
            out.append("?")
        if c == ";":
            if content:
                statements += 1
            content = False
        elif not c.isspace():
            content = True
        i += 1
    if content:
        statements += 1
    return Scan(tuple(out), statements, named, False)


def _skip_quoted(sql: str, start: int, quote: str, *, backslash: bool) -> int:
    i = start + 1
    while i < len(sql):
        c = sql[i]
        if backslash and c == "\\":
            i += 2
            continue
        if c == quote:
            if sql[i + 1 : i + 2] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    return -1
