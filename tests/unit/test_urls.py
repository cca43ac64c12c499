"""The URL rule for what a user or a manifest gives Helm: https, or http on loopback only."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.urls import link_decision, url_problem

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


@pytest.mark.parametrize(
    ("link", "why"),
    [
        pytest.param("example.com/path", "http and https links only", id="no-scheme"),
        pytest.param("ftp://example.com/file", "http and https links only", id="other-scheme-with-slashes"),
        pytest.param("https:example.com", "http and https links only", id="no-slashes"),
        pytest.param("javascript://example.com/%0aalert(1)", "http and https links only", id="javascript"),
        pytest.param("https://user@example.com/", "user name or password", id="userinfo"),
        pytest.param("https://ex_ample.com/", "not a plain host name", id="host-shape"),
        pytest.param("https://example.com:0/", "port is not valid", id="port-zero"),
        pytest.param("https://example.com:99999/", "port is not valid", id="port-too-big"),
        pytest.param("https://exa mple.com/", "whitespace", id="space"),
        pytest.param("https://good.example\\@evil.example/", "backslash", id="backslash"),
        pytest.param("https://@example.com/", "user name or password", id="empty-userinfo"),
        pytest.param("", "non-empty", id="empty"),
        pytest.param(None, "non-empty", id="not-text"),
        pytest.param("https://example.com/" + "a" * (4097 - 20), "longer than 4096", id="one-too-long"),
    ],
)
def test_a_link_helm_would_not_open_as_shown_is_refused_with_its_reason(link: object, why: str) -> None:
    decision = link_decision(link)
    assert decision.problem is not None and why in decision.problem
    assert not decision.allowed


@pytest.mark.parametrize(
    ("link", "host"),
    [
        pytest.param("https://Example.com/a?b=c#d", "example.com", id="query-and-fragment"),
        pytest.param("http://127.0.0.1:8080/x", "127.0.0.1", id="port"),
        pytest.param("HTTPS://example.com/a/b@c", "example.com", id="at-in-the-path"),
        pytest.param("https://example.com/" + "a" * (4096 - 20), "example.com", id="as-long-as-allowed"),
    ],
)
def test_a_plain_http_or_https_link_is_allowed_and_names_its_host(link: str, host: str) -> None:
    decision = link_decision(link)
    assert decision.problem is None and decision.allowed
    assert decision.host == host
