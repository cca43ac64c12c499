"""The SQL scan follows each engine's own lexical rules (what MariaDB itself does is checked in
test_db_fuzz.py against the real server)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

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


def words(sql: str, engine: str) -> set[str]:
    return set(scan(sql, engine).words)


# Each quote kind per engine: what is inside is not a word; a doubled quote escapes; where the
# engine reads backslash escapes, \' does too; where it does not, a backslash ends nothing.
@pytest.mark.parametrize(
    ("engine", "sql", "seen", "hidden"),
    [
        ("sqlite", "SELECT 'a''b INTO' AS x", {"SELECT", "AS", "X"}, {"INTO", "B"}),
        ("sqlite", 'SELECT "a""b INTO" FROM t', {"SELECT", "FROM", "T"}, {"INTO", "B"}),
        ("sqlite", "SELECT `a``b INTO` FROM t", {"SELECT", "FROM", "T"}, {"INTO", "B"}),
        ("sqlite", "SELECT [a INTO] FROM t", {"SELECT", "FROM", "T"}, {"INTO", "A"}),
        ("sqlite", "SELECT 'a\\' INTO x", {"SELECT", "INTO", "X"}, set()),
        ("sqlite", "SELECT [a\\] INTO x", {"SELECT", "INTO", "X"}, set()),
        ("postgres", "SELECT 'a\\' INTO x", {"SELECT", "INTO", "X"}, set()),
        ("postgres", "SELECT 'a''b INTO' AS x", {"SELECT", "AS", "X"}, {"INTO"}),
        ("postgres", 'SELECT "a""b INTO" FROM t', {"SELECT", "FROM", "T"}, {"INTO"}),
        ("postgres", "SELECT E'a\\' INTO' AS x", {"SELECT", "E", "AS", "X"}, {"INTO"}),
        ("postgres", "SELECT e'a\\' INTO' AS x", {"SELECT", "E", "AS", "X"}, {"INTO"}),
        ("postgres", "SELECT 'x' e'\\' INTO' AS y", {"SELECT", "E", "AS", "Y"}, {"INTO"}),
        ("postgres", "SELECT be'a\\' INTO x", {"SELECT", "BE", "INTO", "X"}, set()),
        ("postgres", "be'a\\' INTO x", {"BE", "INTO", "X"}, set()),
        ("postgres", "E'a\\' INTO' AS x", {"E", "AS", "X"}, {"INTO"}),
        ("postgres", "'a\\' AS e", {"AS", "E"}, set()),
        ("postgres", "SELECT X'0\\' INTO y", {"SELECT", "X", "INTO", "Y"}, set()),
        ("postgres", "SELECT `a INTO` FROM t", {"SELECT", "A", "INTO", "FROM", "T"}, set()),
        ("postgres", "SELECT [a INTO] FROM t", {"SELECT", "A", "INTO", "FROM", "T"}, set()),
        ("postgres", "SELECT $$a INTO$$, $q$b INTO$q$ AS x", {"SELECT", "AS", "X"}, {"INTO", "A", "B"}),
        ("mysql", "SELECT 'a\\' INTO' AS x", {"SELECT", "AS", "X"}, {"INTO"}),
        ("mysql", "SELECT 'a''b INTO' AS x", {"SELECT", "AS", "X"}, {"INTO"}),
        ("mysql", 'SELECT "a\\" INTO" AS x', {"SELECT", "AS", "X"}, {"INTO"}),
        ("mysql", 'SELECT "a""b INTO" AS x', {"SELECT", "AS", "X"}, {"INTO"}),
        ("mysql", "SELECT `a``b INTO` FROM t", {"SELECT", "FROM", "T"}, {"INTO"}),
        ("mysql", "SELECT `a\\` INTO x", {"SELECT", "INTO", "X"}, set()),
        ("mysql", "SELECT [a INTO] FROM t", {"SELECT", "A", "INTO", "FROM", "T"}, set()),
    ],
)
def test_every_quote_kind_hides_its_text_exactly_as_its_engine_reads_it(
    engine: str, sql: str, seen: set[str], hidden: set[str]
) -> None:
    found = words(sql, engine)
    assert seen <= found
    assert not hidden & found
    assert not scan(sql, engine).unterminated


@pytest.mark.parametrize(
    ("engine", "sql"),
    [
        ("sqlite", "SELECT 'a"),
        ("sqlite", "SELECT 'a''"),
        ("sqlite", "SELECT [a"),
        ("postgres", "SELECT E'a\\'"),
        ("postgres", "SELECT $q$a$$"),
        ("postgres", "SELECT /* a /* b */"),
        ("mysql", "SELECT 'a\\'"),
        ("mysql", "SELECT /* a"),
        ("mysql", "SELECT /*! 1"),
        ("sqlite", "SELECT `a``"),
        ("sqlite", "/* only an open comment"),
        ("mysql", "SELECT 1 /*!50000"),
        ("mysql", "SELECT /*! 1 */ /*! 2"),
    ],
)
def test_unterminated_text_is_reported_and_counts_as_a_statement(engine: str, sql: str) -> None:
    found = scan(sql, engine)
    assert found.unterminated
    assert found.statements == 1


@pytest.mark.parametrize(
    ("engine", "sql", "seen", "hidden"),
    [
        ("postgres", "SELECT /* a /* b */ INTO */ x", {"SELECT", "X"}, {"INTO", "A", "B"}),
        ("sqlite", "SELECT /* a /* b */ INTO */ x", {"SELECT", "INTO", "X"}, {"A", "B"}),
        ("mysql", "SELECT /* a /* b */ INTO", {"SELECT", "INTO"}, {"A", "B"}),
        ("sqlite", "SELECT 1 -- INTO\n FROM t", {"SELECT", "FROM", "T"}, {"INTO"}),
        ("sqlite", "SELECT 1 -- INTO", {"SELECT"}, {"INTO"}),
        ("sqlite", "SELECT 1 # INTO", {"SELECT", "INTO"}, set()),
        ("mysql", "SELECT 1 # INTO\n FROM t", {"SELECT", "FROM", "T"}, {"INTO"}),
        ("mysql", "SELECT 1 --\tINTO\nFROM t", {"SELECT", "FROM", "T"}, {"INTO"}),
        ("mysql", "SELECT 1 --\x7fINTO\nFROM t", {"SELECT", "FROM", "T"}, {"INTO"}),
        ("mysql", "SELECT 1 --", {"SELECT"}, set()),
        ("mysql", "SELECT 1 --!INTO", {"SELECT", "INTO"}, set()),
        ("mysql", "SELECT /*!50000 INTO */ x", {"SELECT", "INTO", "X"}, {"50000"}),
        ("mysql", "SELECT /*M!100000 INTO */ x", {"SELECT", "INTO", "X"}, set()),
        ("mysql", "SELECT */ INTO", {"SELECT", "INTO"}, set()),
    ],
)
def test_comments_hide_their_text_exactly_as_their_engine_reads_them(
    engine: str, sql: str, seen: set[str], hidden: set[str]
) -> None:
    found = words(sql, engine)
    assert seen <= found
    assert not hidden & found


def test_an_executable_comment_is_flagged_and_must_be_closed() -> None:
    assert scan("SELECT /*! 1 */ 2", "mysql").executable
    assert not scan("SELECT /*! 1 */ 2", "mysql").unterminated
    assert not scan("SELECT /* 1 */ 2", "mysql").executable
    assert not scan("SELECT /*! 1 */ 2", "sqlite").executable


@pytest.mark.parametrize(
    ("sql", "count"),
    [
        ("CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE b SET c = 1; DELETE FROM d; END; SELECT 1", 2),
        (
            "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT CASE WHEN 1 THEN 2 END; SELECT 3; END; SELECT 1",
            2,
        ),
        ("CREATE TABLE t (a); BEGIN; END; SELECT 1", 4),
        ("SELECT 1 AS begin; SELECT 2", 2),
        ("SELECT 1; CREATE TRIGGER t BEGIN SELECT 2; END", 2),
        ("BEGIN; SELECT CASE WHEN 1 THEN 2 END; END", 3),
        ("CREATE TRIGGER t BEGIN SELECT 1; END; END; SELECT 2", 3),
        ("SELECT 1;; ;SELECT 2;", 2),
        ("", 0),
        ("  ;  ", 0),
    ],
)
def test_sqlite_trigger_bodies_hold_their_semicolons_at_every_depth(sql: str, count: int) -> None:
    assert scan(sql, "sqlite").statements == count


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_only_sqlite_reads_a_trigger_body_as_one_statement(engine: str) -> None:
    sql = "CREATE TRIGGER t BEGIN SELECT 1; SELECT 2; END"
    assert scan(sql, engine).statements == 3


@pytest.mark.parametrize(
    ("engine", "sql", "placeholders", "foreign", "named"),
    [
        ("sqlite", "SELECT ?, ? FROM t WHERE a = '?'", ("?", "?"), (), False),
        ("sqlite", "SELECT :a", (), (), True),
        ("sqlite", "SELECT @a, $b", (), (), True),
        ("sqlite", "SELECT ?1", ("?",), (), True),
        ("sqlite", "SELECT $1", (), ("$1",), False),
        ("sqlite", "SELECT a:b", (), (), True),
        ("sqlite", "SELECT 1 :: 2", (), (), False),
        ("postgres", "SELECT $1, $12 FROM t WHERE a = '$3'", ("$1", "$12"), (), False),
        ("postgres", "SELECT a ? b", (), ("?",), False),
        ("postgres", "SELECT :a", (), (), False),
        ("mysql", "SELECT ?, `?`, '?', \"?\" -- ?\n", ("?",), (), False),
        ("mysql", "SELECT $1", (), ("$1",), False),
    ],
)
def test_placeholders_are_found_where_their_engine_sees_them(
    engine: str, sql: str, placeholders: tuple[str, ...], foreign: tuple[str, ...], named: bool
) -> None:
    found = scan(sql, engine)
    assert (found.placeholders, found.foreign, found.named) == (placeholders, foreign, named)


@pytest.mark.parametrize(
    ("engine", "sql", "firsts"),
    [
        (
            "sqlite",
            "select 1; WITH x AS (SELECT 2) SELECT 3; insert into t values (1)",
            ("SELECT", "WITH", "INSERT"),
        ),
        ("postgres", "(SELECT 1); 'a'; SELECT 2", ("SELECT",)),
        ("mysql", "1; SELECT 2", ("SELECT",)),
        ("sqlite", "éa; _b; c1", ("ÉA", "_B", "C1")),
        ("mysql", "$a; SELECT 1", ("$A", "SELECT")),
        ("postgres", "$1; SELECT 1", ("SELECT",)),
    ],
)
def test_the_first_word_of_each_statement_is_upper_cased(
    engine: str, sql: str, firsts: tuple[str, ...]
) -> None:
    assert scan(sql, engine).first_words == firsts


@pytest.mark.parametrize(
    ("sql", "seen", "hidden"),
    [
        ("SELECT 1e1INTO", {"SELECT", "INTO"}, {"1E1INTO", "E1INTO"}),
        ("SELECT 1e+1INTO", {"SELECT", "INTO"}, set()),
        ("SELECT 1.5e-2INTO", {"SELECT", "INTO"}, set()),
        ("SELECT 1.5INTO", {"SELECT", "INTO"}, set()),
        ("SELECT 1.INTO", {"SELECT", "INTO"}, set()),
        ("SELECT .5INTO", {"SELECT", "INTO"}, set()),
        ("SELECT .9INTO", {"SELECT", "INTO"}, {"9INTO"}),
        ("SELECT 1abc", {"SELECT", "1ABC"}, {"ABC"}),
        ("SELECT 1a,INTO", {"SELECT", "1A", "INTO"}, set()),
        ("SELECT 0INTO, 9INTO", {"SELECT", "0INTO", "9INTO"}, {"INTO"}),
        ("SELECT 0x1g,INTO", {"SELECT", "0X1G", "INTO"}, set()),
        ("SELECT 1", {"SELECT"}, {"1"}),
        ("SELECT 12 x", {"SELECT", "X"}, {"12"}),
        ("SELECT 0x1F INTO", {"SELECT", "INTO"}, {"0X1F"}),
        ("SELECT 0x1g", {"SELECT", "0X1G"}, set()),
        ("SELECT 0x", {"SELECT", "0X"}, set()),
        ("SELECT 0b101 INTO", {"SELECT", "INTO"}, {"0B101"}),
        ("SELECT 0b12", {"SELECT", "0B12"}, set()),
        ("SELECT 0b1", {"SELECT"}, {"0B1"}),
        ("SELECT 1.5", {"SELECT"}, set()),
    ],
)
def test_a_mysql_number_ends_where_mysqls_lexer_ends_it(sql: str, seen: set[str], hidden: set[str]) -> None:
    found = words(sql, "mysql")
    assert seen <= found
    assert not hidden & found


@pytest.mark.parametrize(
    ("engine", "sql", "seen"),
    [
        ("sqlite", "SELECT 1e5x", {"SELECT", "X"}),
        ("postgres", "SELECT .5e3x", {"SELECT", "X"}),
        ("sqlite", "SELECT a.b", {"SELECT", "A", "B"}),
        ("sqlite", "SELECT a$b", {"SELECT", "A$B"}),
    ],
)
def test_numbers_and_names_end_where_sqlite_and_postgres_end_them(
    engine: str, sql: str, seen: set[str]
) -> None:
    assert words(sql, engine) == seen


@pytest.mark.parametrize(
    ("engine", "sql", "seen"),
    [
        ("mysql", "SELECT /*!50001INTO @v */", {"SELECT", "INTO", "V"}),
        ("mysql", "SELECT /*!INTO @v */", {"SELECT", "INTO", "V"}),
        ("sqlite", "SELECT /**/ INTO", {"SELECT", "INTO"}),
        ("postgres", "SELECT /**/ INTO", {"SELECT", "INTO"}),
        ("postgres", "SELECT /*/**/*/ INTO", {"SELECT", "INTO"}),
    ],
)
def test_the_shortest_comments_end_exactly_where_they_close(engine: str, sql: str, seen: set[str]) -> None:
    found = scan(sql, engine)
    assert seen <= set(found.words)
    assert not found.unterminated


# -- Every quote kind, any content ------------------------------------------------------------
# Text that means something outside quotes: words, placeholders, comment and quote openers,
# statement ends, backslashes.
PIECES = ["INTO", "x", " ", ";", "?", "$1", "--", "#", "/*", "*/", "/*!", "'", '"', "`", "\\", "[", "]",
          "$", "$$", "$q$", "e", "\n", "é"]  # fmt: skip
CONTENTS = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@dataclass(frozen=True)
class QuoteKind:
    engine: str
    opener: str
    closer: str
    backslash: bool = False
    """A backslash escapes the next character (so a literal one is written doubled)."""

    def quoted(self, content: str, backslash_quote: bool) -> str:
        if self.closer.startswith("$"):  # a dollar-quoted body: no escapes, any text but its tag
            return self.opener + content + self.closer
        if self.backslash:
            content = content.replace("\\", "\\\\")
        if self.opener.endswith(self.closer):
            escape = "\\" if self.backslash and backslash_quote else self.closer
            content = content.replace(self.closer, escape + self.closer)
        return self.opener + content + self.closer

    def holds(self, content: str) -> bool:
        """Whether ``content`` can be written in this kind at all."""
        if self.closer.startswith("$"):
            return (content + self.closer).find(self.closer) == len(content)
        return self.opener.endswith(self.closer) or self.closer not in content


QUOTE_KINDS = [
    QuoteKind("sqlite", "'", "'"),
    QuoteKind("sqlite", '"', '"'),
    QuoteKind("sqlite", "`", "`"),
    QuoteKind("sqlite", "[", "]"),
    QuoteKind("postgres", "'", "'"),
    QuoteKind("postgres", "E'", "'", backslash=True),
    QuoteKind("postgres", "e'", "'", backslash=True),
    QuoteKind("postgres", '"', '"'),
    QuoteKind("postgres", "$$", "$$"),
    QuoteKind("postgres", "$q$", "$q$"),
    QuoteKind("postgres", "$_1$", "$_1$"),
    QuoteKind("mysql", "'", "'", backslash=True),
    QuoteKind("mysql", '"', '"', backslash=True),
    QuoteKind("mysql", "`", "`"),
]
PLACEHOLDER = {"sqlite": "?", "postgres": "$1", "mysql": "?"}


@pytest.mark.parametrize("kind", QUOTE_KINDS, ids=lambda k: f"{k.engine}-{k.opener}")
@settings(max_examples=50)
@given(content=CONTENTS, backslash_quote=st.booleans())
def test_every_quote_kind_hides_any_content_and_ends_exactly_at_its_close(
    kind: QuoteKind, content: str, backslash_quote: bool
) -> None:
    assume(kind.holds(content))
    mark = PLACEHOLDER[kind.engine]
    sql = f"SELECT {kind.quoted(content, backslash_quote)}AFTER, {mark} FROM t"
    found = scan(sql, kind.engine)
    assert (found.unterminated, found.statements, found.placeholders) == (False, 1, (mark,))
    assert (found.foreign, found.named, found.executable) == ((), False, False)
    prefix = {kind.opener[:-1].upper()} if kind.opener[:-1].isalpha() else set()  # E'…' reads E
    assert found.words == {"SELECT", "AFTER", "FROM", "T"} | prefix


@pytest.mark.parametrize("kind", QUOTE_KINDS, ids=lambda k: f"{k.engine}-{k.opener}")
@settings(max_examples=50)
@given(content=CONTENTS, backslash_quote=st.booleans())
def test_every_quote_kind_left_open_is_unterminated(
    kind: QuoteKind, content: str, backslash_quote: bool
) -> None:
    assume(kind.holds(content))
    quoted = kind.quoted(content, backslash_quote)
    found = scan("SELECT " + quoted[: -len(kind.closer)], kind.engine)
    assert (found.unterminated, found.statements) == (True, 1)


@settings(max_examples=50)
@given(content=CONTENTS)
def test_sqlite_reads_a_single_quoted_string_as_the_scan_does(content: str) -> None:
    quoted = QUOTE_KINDS[0].quoted(content, backslash_quote=False)
    with sqlite3.connect(":memory:") as db:
        assert db.execute(f"SELECT {quoted}").fetchone() == (content,)


@pytest.mark.parametrize("engine", ["sqlite", "postgres", "mysql"])
def test_a_non_ascii_character_from_u0080_continues_and_starts_a_name(engine: str) -> None:
    assert words("SELECT a\x80INTO, \x80INTO x", engine) == {"SELECT", "A\x80INTO", "\x80INTO", "X"}


def test_an_executable_comment_ends_exactly_at_its_close() -> None:
    found = scan("SELECT /*!1*/INTO @v", "mysql")
    assert {"SELECT", "INTO", "V"} <= found.words and not found.unterminated
    # Only a comment, executable or not, is no statement.
    assert scan("SELECT 1; /*! */", "mysql").statements == 1
    assert scan("SELECT 1; /* */", "mysql").statements == 1


@pytest.mark.parametrize("engine", ["sqlite", "postgres", "mysql"])
def test_a_non_ascii_digit_starts_and_continues_a_name_as_in_every_engine(engine: str) -> None:
    # Only 0-9 are digits to the engines' lexers; ² or ٣ is a character of a name.
    assert words("SELECT ²INTO, ٣x, a٣", engine) == {"SELECT", "²INTO", "٣X", "A٣"}
    assert scan("SELECT ²; ٣", engine).first_words == ("SELECT", "٣")
