"""A small lexical scan of SQL: placeholders and statement count, outside strings and comments.

It does not parse SQL; it only finds what lint must check — which placeholders a statement
uses and whether it holds more than one statement — while skipping quoted text, quoted
identifiers, comments and (PostgreSQL) dollar-quoted bodies. The engine itself is still the
judge at run time (one statement per protocol message, read-only transactions).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_PG_PARAM = re.compile(r"\$([0-9]+)")
_SQLITE_NAMED = re.compile(r"[:@$][A-Za-z_]|\?[0-9]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


@dataclass(frozen=True)
class Scan:
    placeholders: tuple[str, ...]
    """Each placeholder in order: ``?`` or ``$n``."""
    statements: int
    named: bool
    """SQLite named or numbered parameters (``:x``, ``@x``, ``$x``, ``?1``) were used."""
    unterminated: bool
    first_words: tuple[str, ...] = ()
    """The first keyword of each statement, upper-cased (``SELECT``, ``WITH``, ``INSERT``…)."""
    words: frozenset[str] = frozenset()
    """Every bare word outside strings, quoted identifiers and comments, upper-cased."""
    positions: tuple[int, ...] = ()
    """Where each ``?`` placeholder is in the text (SQLite and MySQL)."""


def scan(sql: str, engine: str) -> Scan:
    out: list[str] = []
    positions: list[int] = []
    i, n = 0, len(sql)
    statements, content, named = 0, False, False
    mysql = engine == "mysql"
    block = _Block()
    firsts: list[str] = []
    words: set[str] = set()
    while i < n:
        c = sql[i]
        w = _WORD.match(sql, i) if (c.isalpha() or c == "_") and not _in_word(sql, i) else None
        if w is not None:
            word = w.group(0).upper()
            words.add(word)
            if not content:
                firsts.append(word)
            block.see(word, engine)
            i, content = w.end(), True
            continue
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
            positions.append(i)
        if c == ";" and block.depth == 0:
            block = _Block()
            if content:
                statements += 1
            content = False
        elif not c.isspace():
            content = True
        i += 1
    if content:
        statements += 1
    return Scan(tuple(out), statements, named, False, tuple(firsts), frozenset(words), tuple(positions))


def interpolate(sql: str, positions: Sequence[int], literals: Sequence[str]) -> str:
    """``sql`` with the placeholder at each position replaced by the matching SQL literal.

    Used for MySQL, whose driver would otherwise run Python %-formatting over the whole text
    (so a ``%`` anywhere, even inside a string, would be read as a format code). Each literal
    comes from the driver's own escaping, for the connection's character set and SQL mode.
    """
    if len(positions) != len(literals):
        raise ValueError("one literal per placeholder")
    parts, last = [], 0
    for pos, literal in zip(positions, literals, strict=True):
        parts += [sql[last:pos], literal]
        last = pos + 1
    parts.append(sql[last:])
    return "".join(parts)


def _in_word(sql: str, i: int) -> bool:
    """Whether position ``i`` continues a word (a digit-led name, ``x1`` after ``$``…)."""
    return i > 0 and (sql[i - 1].isalnum() or sql[i - 1] in "_$")


class _Block:
    """SQLite's CREATE TRIGGER … BEGIN … END holds ``;`` that do not end the statement."""

    def __init__(self) -> None:
        self.trigger = False
        self.started = False
        self.create = False
        self.depth = 0

    def see(self, word: str, engine: str) -> None:
        if engine != "sqlite":
            return
        if not self.started:
            self.started = True
            self.create = word == "CREATE"
            return
        if word == "TRIGGER" and self.create and self.depth == 0:
            self.trigger = True
        elif self.trigger and word in ("BEGIN", "CASE"):
            self.depth += 1
        elif self.trigger and word == "END" and self.depth > 0:
            self.depth -= 1


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
