"""Properties of http path and query rendering, for arbitrary argument values (Hypothesis).

Whatever an extension passes, the request either is refused or stays under the profile's base
URL once parsed, and every value arrives exactly as given: a path segment decodes to the
argument, a query value parses back to it. Arguments come from page JSON, so strings include
lone surrogates (JSON's "\\ud800") and every character URLs give meaning to.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from broker.errors import CallError, ErrorCode
from broker.kinds.http.render import render
from broker.kinds.http.rules import parse_call

BASES = (
    "http://127.0.0.1:8080",
    "https://api.example.com/v1",
    "https://api.example.com/v1/",
    "http://localhost:9/a/b",
)
URL_CHARS = "./\\%?#&=+;:@!$'()*,[]{}~-_ \t\r\n\x00\x7féß€\U0001f600\ud800\udfff"

# Strings mostly of the characters URLs give meaning to, and strings of any code point
# (surrogates included).
url_text = st.text(st.sampled_from(URL_CHARS + "aZ09"), max_size=20)
wide_text = st.text(st.characters(exclude_categories=()), max_size=20)
text = st.one_of(url_text, wide_text)
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False))
value = st.one_of(text, st.sampled_from(["", ".", "..", "%2e", "%2e%2e", "..%2f", "/..", "a/../b"]), scalar)

PATHS = {
    "two": {"method": "GET", "path": "/x/{a}/{b}", "query": {"q": "{a}", "k": "type:{b}"}},
    "joined": {"method": "GET", "path": "/files/{a}{b}"},
}


def spelled(arg: Any) -> str:
    return arg if isinstance(arg, str) else json.dumps(arg)


def encodable(arg: Any) -> bool:
    try:
        spelled(arg).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def rendered(base: str, call: str, args: dict[str, Any]) -> httpx.URL | None:
    """The URL, or None when Helm refused the arguments (any other outcome fails the test)."""
    try:
        return render(base, parse_call(PATHS[call]), args).url
    except CallError as err:
        refusal = err
    assert refusal.code is ErrorCode.REFUSED
    return None


def segments_under(base: str, url: httpx.URL) -> list[str]:
    """The raw path segments after the base path, checked to stay under it by two parsers."""
    text = str(url)
    ours, theirs = urlsplit(base), urlsplit(text)
    assert (theirs.scheme, theirs.hostname, theirs.port) == (ours.scheme, ours.hostname, ours.port)
    assert (url.scheme, url.host, url.port) == (
        httpx.URL(base).scheme,
        httpx.URL(base).host,
        httpx.URL(base).port,
    )
    prefix = ours.path.rstrip("/") + "/"
    assert theirs.path.startswith(prefix)
    assert url.raw_path.decode("ascii").split("?")[0] == theirs.path
    rest = theirs.path[len(prefix) :].split("/")
    assert all(unquote(s) not in ("", ".", "..") for s in rest)
    return rest


@given(base=st.sampled_from(BASES), call=st.sampled_from(sorted(PATHS)), a=value, b=value)
@example(base=BASES[0], call="two", a="\ud800", b="x")
def test_a_rendered_url_always_stays_under_the_base_url(base: str, call: str, a: Any, b: Any):
    url = rendered(base, call, {"a": a, "b": b})
    if url is not None:
        segments_under(base, url)


@given(base=st.sampled_from(BASES), a=value, b=value)
def test_path_and_query_values_round_trip(base: str, a: Any, b: Any):
    assume(a is not None and b is not None and encodable(a) and encodable(b))
    assume(spelled(a) not in ("", ".", "..") and spelled(b) not in ("", ".", ".."))
    url = rendered(base, "two", {"a": a, "b": b})
    assert url is not None
    assert [unquote(s, errors="strict") for s in segments_under(base, url)[1:]] == [spelled(a), spelled(b)]
    query = parse_qsl(url.query.decode("ascii"), keep_blank_values=True, strict_parsing=True, errors="strict")
    assert query == [("q", spelled(a)), ("k", f"type:{spelled(b)}")]


@given(base=st.sampled_from(BASES), b=text)
def test_a_missing_or_null_query_argument_leaves_only_its_parameter_out(base: str, b: str):
    assume(encodable(b) and b not in ("", ".", ".."))
    for args in ({"a": "x", "b": b}, {"a": "x", "b": b, "unused": None}):
        url = rendered(base, "two", args)
        assert url is not None
        assert [k for k, _ in parse_qsl(url.query.decode("ascii"), keep_blank_values=True)] == ["q", "k"]
    url = render(base, parse_call({**PATHS["two"], "path": "/x/{b}"}), {"b": b, "a": None}).url
    assert parse_qsl(url.query.decode("ascii"), keep_blank_values=True) == [("k", f"type:{b}")]


@given(base=st.sampled_from(BASES), a=st.sampled_from(["", ".", ".."]), b=st.sampled_from(["", "."]))
def test_empty_dot_and_dot_dot_segments_are_refused(base: str, a: str, b: str):
    assert rendered(base, "two", {"a": a, "b": "fine"}) is None
    assert rendered(base, "two", {"a": "fine", "b": a}) is None
    if a + b in ("", ".", ".."):
        assert rendered(base, "joined", {"a": a, "b": b}) is None


lone_surrogate = st.characters(categories=["Cs"])
not_text = st.builds(lambda head, bad, tail: head + bad + tail, text, lone_surrogate, text)


@given(base=st.sampled_from(BASES), a=not_text)
def test_a_value_that_is_not_unicode_text_is_refused(base: str, a: str):
    with pytest.raises(CallError) as caught:
        render(base, parse_call({"method": "POST", "path": "/x", "body": {"v": "{a}"}}), {"a": a})
    assert caught.value.code is ErrorCode.REFUSED
    assert rendered(base, "two", {"a": a, "b": "x"}) is None
