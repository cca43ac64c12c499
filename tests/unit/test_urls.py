"""The URL rule for what a user or a manifest gives Helm: https, or http on loopback only."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.urls import url_problem

SCHEMES = ["https", "http", "HTTPS", "Http", "ftp", "file", ""]
HOSTS = ["example.com", "127.0.0.1", "localhost", "LOCALHOST", "127.0.0.2", ""]
USERS = ["", "u@", ":p@"]
PORTS = ["", ":0", ":1", ":8080"]
PATHS = ["", "/", "/p"]
QUERIES = ["", "?", "?a=1"]
FRAGMENTS = ["", "#", "#f"]


def _acceptable(
    scheme: str,
    host: str,
    user: str,
    port: str,
    path: str,
    query: str,
    fragment: str,
    allow_query: bool,
    allow_path: bool,
) -> bool:
    secure = scheme.lower() == "https"
    loopback = scheme.lower() == "http" and host.lower() in ("127.0.0.1", "localhost")
    return (
        bool(host)
        and (secure or loopback)
        and not user
        and port != ":0"
        and not fragment
        and (allow_query or not query)
        and (allow_path or path in ("", "/"))
    )


def test_every_url_form_is_accepted_exactly_when_the_rule_allows_it() -> None:
    forms = itertools.product(
        SCHEMES, HOSTS, USERS, PORTS, PATHS, QUERIES, FRAGMENTS, [True, False], [True, False]
    )
    wrong = []
    for scheme, host, user, port, path, query, fragment, allow_query, allow_path in forms:
        url = f"{scheme}://{user}{host}{port}{path}{query}{fragment}"
        expected = _acceptable(scheme, host, user, port, path, query, fragment, allow_query, allow_path)
        problem = url_problem(url, allow_query=allow_query, allow_path=allow_path)
        if (problem is None) is not expected:
            wrong.append((url, allow_query, allow_path, problem))
    assert wrong == []


@given(
    st.sampled_from(["https://example.com/a?b=c", "http://127.0.0.1:8080/x"]),
    st.sampled_from([" ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\x85", "\u2028", "\\"]),
    st.integers(0, 30),
)
def test_a_space_backslash_or_control_character_anywhere_is_refused(url: str, bad: str, at: int) -> None:
    at = min(at, len(url))
    problem = url_problem(url[:at] + bad + url[at:])
    assert problem is not None and "spaces, backslashes or control characters" in problem


@pytest.mark.parametrize("char", ["!", "~", "\x80", "é", "%20"])
def test_printable_characters_other_than_backslash_are_accepted(char: str) -> None:
    assert url_problem(f"https://example.com/{char}") is None


@pytest.mark.parametrize("url", ["", None, 42, b"https://example.com"])
def test_an_empty_or_non_text_url_is_refused(url: object) -> None:
    assert url_problem(url) == "must be a non-empty URL"  # type: ignore[arg-type]


@pytest.mark.parametrize("url", ["https://example.com:99999/", "https://example.com:x/", "https://[::1/"])
def test_a_url_that_does_not_parse_is_refused(url: str) -> None:
    assert url_problem(url) == "is not a valid URL"


def test_by_default_a_query_and_a_path_are_allowed() -> None:
    assert url_problem("https://example.com/a/b?c=d") is None
