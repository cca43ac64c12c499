"""A lexical scan of SQL, read the way each engine's own lexer reads it.

It does not parse SQL. It finds what Helm's checks need — the placeholders a statement uses,
how many statements it holds, the words outside strings and comments — and skips quoted text,
quoted identifiers and comments exactly where the engine does:

* SQLite: '…' strings; "…", `…` and […] identifiers; -- and /* */ comments.
* PostgreSQL: '…' strings, E'…' strings with backslash escapes, "…" identifiers,
  $tag$…$tag$ bodies, -- comments and nested /* */ comments.
* MySQL and MariaDB, in the session Helm sets up (backslash escapes on, ANSI_QUOTES off):
  '…' and "…" strings with backslash escapes and doubled quotes; `…` identifiers, where only a
  doubled backtick escapes; # comments; -- comments only when whitespace or a control character
  follows (``1--1`` is one minus minus one); /* */ comments; and the executable comments
  ``/*! … */`` and ``/*M! … */``, whose content the server runs, so it is scanned as code.
  A number ends where MySQL's lexer ends it: ``1e1INTO`` is ``1e1`` then ``INTO``.

The MariaDB differential test in tests/unit/kinds/test_db_fuzz.py holds this to the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_PG_PARAM = re.compile(r"\$([0-9]+)")
_SQLITE_NAMED = re.compile(r"[:@$][A-Za-z_]|\?[0-9]")
_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_MYSQL_EXPONENT = re.compile(r"[eE][+-]?[0-9]+")


@dataclass(frozen=True)
class Scan:
    placeholders: tuple[str, ...]
    """Each placeholder in order: ``?`` or ``$n``."""
    statements: int
    named: bool
    """SQLite named or numbered parameters (``:x``, ``@x``, ``$x``, ``?1``) were used."""
    unterminated: bool
    first_words: tuple[str, ...]
    """The first keyword of each statement, upper-cased (``SELECT``, ``WITH``, ``INSERT``…)."""
    words: frozenset[str]
    """Every bare word outside strings, quoted identifiers and comments, upper-cased."""
    executable: bool
    """A MySQL executable comment (``/*! … */``, ``/*M! … */``) is present."""
    foreign: tuple[str, ...]
    """Another engine's placeholders, outside strings and comments: PostgreSQL's ``$1`` in
    SQLite or MySQL, ``?`` in PostgreSQL (where it may also be a jsonb operator)."""


def scan(sql: str, engine: str) -> Scan:
    return _Scanner(sql, engine).run()


def _digit(c: str) -> bool:
    """0-9, the only digits of the engines' lexers (``²`` or ``٣`` is a character of a name)."""
    return "0" <= c <= "9"


def _ident_char(c: str) -> bool:
    """A character that continues an unquoted identifier (any engine; non-ASCII letters too)."""
    return c.isalnum() or c in "_$" or ord(c) >= 0x80


def _line_end(sql: str, i: int) -> int:
    """The index after the newline that ends the line comment at ``i``, or the end of the text."""
    return sql.find("\n", i) + 1 or len(sql)


def _mysql_dash_comment(sql: str, i: int) -> bool:
    """``--`` at ``i`` starts a MySQL comment: the end of the text, whitespace or a control follows."""
    after = sql[i + 2 : i + 3]
    return after == "" or ord(after) <= 0x20 or after == "\x7f"


class _Scanner:
    def __init__(self, sql: str, engine: str) -> None:
        self.sql, self.engine, self.mysql = sql, engine, engine == "mysql"
        self.placeholders: list[str] = []
        self.firsts: list[str] = []
        self.words: set[str] = set()
        self.statements = 0
        self.content = False
        self.named = False
        self.exec_depth = 0
        self.executable = False
        self.foreign: list[str] = []
        self.block = _Block(engine)

    def run(self) -> Scan:
        i, n = 0, len(self.sql)
        while 0 <= i < n:
            i = self._step(i)
        unterminated = i < 0 or self.exec_depth > 0
        if self.content:
            self.statements += 1
        return Scan(
            tuple(self.placeholders), max(self.statements, 1) if unterminated else self.statements,
            self.named, unterminated, tuple(self.firsts), frozenset(self.words), self.executable,
            tuple(self.foreign),
        )  # fmt: skip

    def _step(self, i: int) -> int:
        """Scan one token at ``i``; the index after it, or -1 for an unterminated one."""
        for handler in (self._comment, self._quoted, self._word, self._placeholder):
            end = handler(i)
            if end is not None:
                return end
        c = self.sql[i]
        if c == ";" and self.block.depth == 0:
            self.block = _Block(self.engine)
            if self.content:
                self.statements += 1
            self.content = False
        elif not c.isspace():
            self.content = True
        return i + 1

    def _comment(self, i: int) -> int | None:
        sql = self.sql
        if sql.startswith("--", i) and (not self.mysql or _mysql_dash_comment(sql, i)):
            return _line_end(sql, i)
        if self.mysql and sql[i] == "#":
            return _line_end(sql, i)
        if self.exec_depth and sql.startswith("*/", i):
            self.exec_depth -= 1
            return i + 2
        if not sql.startswith("/*", i):
            return None
        if self.mysql and (sql.startswith("!", i + 2) or sql.startswith("M!", i + 2)):
            self.exec_depth += 1
            self.executable = True
            j = sql.index("!", i) + 1
            while j < len(sql) and _digit(sql[j]):  # the server version it is meant for
                j += 1
            return j
        return self._block_comment(i)

    def _block_comment(self, i: int) -> int:
        """The end of the /* */ comment at ``i`` (PostgreSQL nests them), or -1."""
        depth, j = 1, i + 2
        while depth:
            close = self.sql.find("*/", j)
            if close < 0:
                return -1
            nested = self.sql.find("/*", j) if self.engine == "postgres" else -1
            if 0 <= nested < close:
                depth, j = depth + 1, nested + 2
            else:
                depth, j = depth - 1, close + 2
        return j

    def _quoted(self, i: int) -> int | None:
        sql, c = self.sql, self.sql[i]
        if c == "'":
            backslash = self.mysql or (self.engine == "postgres" and _e_prefix(sql, i))
            end = _skip_quoted(sql, i, "'", "'", backslash=backslash)
        elif c == '"':
            end = _skip_quoted(sql, i, '"', '"', backslash=self.mysql)
        elif c == "`" and self.engine != "postgres":
            end = _skip_quoted(sql, i, "`", "`", backslash=False)
        elif c == "[" and self.engine == "sqlite":
            end = _skip_quoted(sql, i, "[", "]", backslash=False)
        elif c == "$" and self.engine == "postgres" and (m := _DOLLAR_TAG.match(sql, i)):
            close = sql.find(m.group(0), m.end())
            end = -1 if close < 0 else close + len(m.group(0))
        else:
            return None
        self.content = True
        return end

    def _word(self, i: int) -> int | None:
        sql, c = self.sql, self.sql[i]
        if _digit(c) or (c == "." and _digit(sql[i + 1 : i + 2])):
            end, is_word = _mysql_number(sql, i) if self.mysql else (_number_end(sql, i), False)
            if not is_word:
                self.content = True
                return end
        elif c.isalpha() or c == "_" or ord(c) >= 0x80 or (c == "$" and self.mysql):
            end = i  # the first character continues a name too
            while end < len(sql) and _ident_char(sql[end]):
                end += 1
        else:
            return None
        word = sql[i:end].upper()
        if self.mysql and _PG_PARAM.fullmatch(word):
            self.foreign.append(word)  # MySQL reads $1 as a name; it was meant as a placeholder
        self.words.add(word)
        if not self.content:
            self.firsts.append(word)
        self.block.see(word)
        self.content = True
        return end

    def _placeholder(self, i: int) -> int | None:
        sql, c = self.sql, self.sql[i]
        if self.engine == "postgres" and c == "$" and (p := _PG_PARAM.match(sql, i)):
            self.placeholders.append(p.group(0))
            self.content = True
            return p.end()
        if self.engine == "sqlite" and _SQLITE_NAMED.match(sql, i):
            self.named = True
        if self.engine == "sqlite" and (p := _PG_PARAM.match(sql, i)):
            self.foreign.append(p.group(0))
        if c == "?" and self.engine == "postgres":
            self.foreign.append("?")
        if c == "?" and self.engine != "postgres":
            self.placeholders.append("?")
            self.content = True
            return i + 1
        return None


def _e_prefix(sql: str, i: int) -> bool:
    """PostgreSQL's E'…': the quote follows a lone E, which turns on backslash escapes."""
    return i > 0 and sql[i - 1] in "eE" and (i < 2 or not _ident_char(sql[i - 2]))


def _number_end(sql: str, i: int) -> int:
    m = _NUMBER.match(sql, i)
    assert m is not None  # i is at a digit, or at a point before one
    return m.end()


def _mysql_number(sql: str, i: int) -> tuple[int, bool]:
    """Where MySQL ends the token at ``i`` that starts with a digit or a point, and whether it is
    an identifier (``1abc``, ``0x1g``) rather than a number."""
    n = len(sql)

    def word_end(j: int) -> int:
        while j < n and _ident_char(sql[j]):
            j += 1
        return j

    if sql.startswith(("0x", "0b"), i):
        digits = "0123456789abcdefABCDEF" if sql[i + 1] == "x" else "01"
        j = i + 2
        while j < n and sql[j] in digits:
            j += 1
        if j > i + 2 and (j == n or not _ident_char(sql[j])):
            return j, False
        return word_end(i), True
    j = i
    while j < n and _digit(sql[j]):
        j += 1
    if j < n and sql[j] == ".":  # a decimal: digits, then an optional exponent, then it ends
        j += 1
        while j < n and _digit(sql[j]):
            j += 1
        e = _MYSQL_EXPONENT.match(sql, j)
        return (e.end() if e else j), False
    if j == n or not _ident_char(sql[j]):
        return j, False
    e = _MYSQL_EXPONENT.match(sql, j)
    if e:  # 1e1: a float that ends after its exponent, whatever follows
        return e.end(), False
    return word_end(j), True


def _skip_quoted(sql: str, start: int, quote: str, close: str, *, backslash: bool) -> int:
    """The index after the quoted text at ``start`` (a doubled closing quote escapes), or -1."""
    i = start + 1
    while i < len(sql):
        c = sql[i]
        if backslash and c == "\\":
            i += 2
            continue
        if c == close:
            if quote == close and sql[i + 1 : i + 2] == close:
                i += 2
                continue
            return i + 1
        i += 1
    return -1


class _Block:
    """SQLite's CREATE TRIGGER … BEGIN … END holds ``;`` that do not end the statement."""

    def __init__(self, engine: str) -> None:
        self.sqlite = engine == "sqlite"
        self.trigger = False
        self.started = False
        self.create = False
        self.depth = 0

    def see(self, word: str) -> None:
        if not self.sqlite:
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
