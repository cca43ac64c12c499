"""The exact request Helm renders from a declared http call and its arguments (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from broker.errors import CallError, ErrorCode
from broker.kinds.http.render import check, render
from broker.kinds.http.rules import HttpCall

BASE = "https://api.example.com/v1"


def call(
    path: str = "/x", query: dict[str, str] | None = None, body: Any = None, has_body: bool = False
) -> HttpCall:
    return HttpCall("POST" if has_body else "GET", path, query or {}, body, has_body, has_body)


def refusal(base: str, decl: HttpCall, args: dict[str, Any]) -> str:
    with pytest.raises(CallError) as caught:
        render(base, decl, args)
    assert caught.value.code is ErrorCode.REFUSED
    return caught.value.message


@pytest.mark.parametrize("value", [[1], {"a": 1}, ("t",), b"x"])
def test_render_itself_refuses_an_argument_that_is_not_a_scalar(value: object) -> None:
    assert "must be a string, number, boolean or null" in refusal(BASE, call(), {"a": value})
    with pytest.raises(CallError):
        check(call(), {"a": value})


@pytest.mark.parametrize("value", [None, True, 3, 1.5, "s"])
def test_every_scalar_and_null_is_an_acceptable_argument(value: object) -> None:
    render(BASE, call(), {"a": value})


def test_a_text_argument_may_be_4096_characters_and_no_more() -> None:
    assert render(BASE, call("/{a}"), {"a": "é" * 4096}).url.raw_path.count(b"%C3%A9") == 4096
    assert "longer than 4096 characters" in refusal(BASE, call("/{a}"), {"a": "x" * 4097})
    assert "longer than 4096" in refusal(BASE, call(), {"unused": "x" * 4097})


def test_a_path_value_is_one_encoded_segment_in_json_spelling_for_non_text() -> None:
    url = render(BASE, call("/x/{a}/{b}/{c}"), {"a": "p/q r", "b": True, "c": 1.5}).url
    assert url.raw_path == b"/v1/x/p%2Fq%20r/true/1.5"


@pytest.mark.parametrize("args", [{}, {"a": None}, {"a": ""}])
def test_a_missing_null_or_empty_path_value_is_refused(args: dict[str, Any]) -> None:
    refusal(BASE, call("/x/{a}"), args)


def test_query_parameters_are_encoded_and_one_with_a_missing_argument_is_left_out() -> None:
    decl = call("/x", {"first": "{a}", "k y": "type:{b}", "last": "{c}"})
    url = render(BASE, decl, {"b": "a&b=c", "c": 2}).url
    assert url.raw_path == b"/v1/x?k%20y=type%3Aa%26b%3Dc&last=2"
    assert render(BASE, decl, {}).url.raw_path == b"/v1/x"


def test_a_body_fills_whole_placeholders_at_any_depth_and_keeps_other_text() -> None:
    template = {"q": "{query} {x}", "v": "{a}", "list": ["{b}", 1, None, {"deep": "{a}"}], "n": 7}
    body = render(BASE, call(body=template, has_body=True), {"a": 1.5, "b": None, "query": "ignored"}).body
    assert body == b'{"q":"{query} {x}","v":1.5,"list":[null,1,null,{"deep":1.5}],"n":7}'


@pytest.mark.parametrize(
    ("template", "sent"), [("{a}", b'"t"'), ([1, "{a}"], b'[1,"t"]'), (3, b"3"), (None, b"null")]
)
def test_a_list_scalar_or_null_body_template_is_sent_as_json(template: Any, sent: bytes) -> None:
    assert render(BASE, call(body=template, has_body=True), {"a": "t"}).body == sent


def test_a_body_placeholder_without_its_argument_is_refused_by_render_and_by_check() -> None:
    decl = call(body={"v": ["{a}"]}, has_body=True)
    assert "required (it fills the body)" in refusal(BASE, decl, {})
    with pytest.raises(CallError):
        check(decl, {})


def test_a_call_without_a_body_sends_none_and_check_ignores_its_template() -> None:
    decl = call(body="{a}", has_body=False)
    assert render(BASE, decl, {}).body is None
    check(decl, {})


def test_check_refuses_what_render_refuses_in_the_path_and_the_query() -> None:
    with pytest.raises(CallError):
        check(call("/{a}"), {"a": ""})
    with pytest.raises(CallError):
        check(call("/x", {"q": "{a}"}), {"a": "\ud800"})
    check(call("/x/{a}", {"q": "{b}"}), {"a": "y"})


@pytest.mark.parametrize(
    ("base", "path"),
    [
        ("https://api.example.com", "@evil.example/x"),
        ("https://api.example.com", ":8443/x"),
        ("https://api.example.com/v1", "x"),
        ("https://api.example.com/v1", "2/x"),
    ],
)
def test_a_url_that_leaves_the_base_after_parsing_is_refused(base: str, path: str) -> None:
    assert "would leave the service's base URL" in refusal(base, call(path), {})


def test_arguments_that_do_not_make_a_valid_url_are_refused() -> None:
    assert "do not make a valid URL" in refusal("https://api.example.com", call(":abc/x"), {})


def test_a_base_with_a_trailing_slash_and_a_query_in_the_template_stay_under_the_base() -> None:
    url = render("https://api.example.com/v1/", call("/x?fixed=1"), {}).url
    assert (url.host, url.raw_path) == ("api.example.com", b"/v1/x?fixed=1")


def test_a_body_is_sent_as_compact_utf8_json_and_shown_as_text() -> None:
    rendered = render(BASE, call(body={"t": "{a}", "n": [1, 2]}, has_body=True), {"a": "é€"})
    assert rendered.body == '{"t":"é€","n":[1,2]}'.encode()
    assert rendered.body_text == '{"t":"é€","n":[1,2]}'
    assert render(BASE, call(), {}).body_text is None


def test_a_body_never_carries_nan_or_infinity() -> None:
    for number in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="JSON compliant"):
            render(BASE, call(body="{a}", has_body=True), {"a": number})
