"""Scrubbing secrets from results: every form, every place, nothing else changed."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from broker.errors import CallError, ErrorCode
from broker.redact import REDACTED, Scrubber

SECRET = 's3cr/t+"tok"é'


def test_each_form_of_a_secret_is_redacted():
    text = json.dumps({"k": SECRET}, ensure_ascii=False)
    forms = [
        SECRET,
        text,
        json.dumps(SECRET),
        json.dumps(SECRET)[1:-1].replace("/", "\\/"),
        quote(SECRET, safe=""),
    ]
    scrubber = Scrubber([SECRET])
    assert [SECRET not in scrubber.text(f) and REDACTED in scrubber.text(f) for f in forms] == [True] * 5


def test_values_keys_and_nested_json_text_are_redacted_and_everything_else_kept():
    data = {
        "auth": f"Bearer {SECRET}",
        SECRET: [1, None, True, {"deep": [f"x{SECRET}y"]}],
        "as_text": json.dumps({"h": SECRET}),
        "keep": "Bearer nothing",
    }
    scrubber = Scrubber([f"Bearer {SECRET}", SECRET])
    assert scrubber.value(data) == {
        "auth": REDACTED,
        REDACTED: [1, None, True, {"deep": [f"x{REDACTED}y"]}],
        "as_text": json.dumps({"h": REDACTED}),
        "keep": "Bearer nothing",
    }
    assert scrubber.count == 4


def test_keys_that_become_equal_are_both_kept():
    data = {"a": 1, f"{SECRET}": 2, "b": 3, f"{SECRET}{SECRET}": 4, REDACTED: 5}
    assert list(Scrubber([SECRET]).value(data).items()) == [
        ("a", 1), (f"{REDACTED} (2)", 2), ("b", 3), (REDACTED * 2, 4), (REDACTED, 5)]  # fmt: skip


def test_data_nested_deeper_than_the_recursion_limit_is_scrubbed():
    data: list[object] = [SECRET]
    for _ in range(20_000):
        data = [data]
    Scrubber([SECRET]).value(data)
    for _ in range(20_000):
        data = data[0]  # type: ignore[assignment]
    assert data == [REDACTED]


@pytest.mark.parametrize("secret", ["q", "ab"])
def test_a_short_secret_is_redacted_too(secret: str):
    scrubber = Scrubber([secret])
    assert scrubber.text(f"x{secret}y{secret}") == f"x{REDACTED}y{REDACTED}"
    assert scrubber.count == 2


def test_no_secrets_or_empty_ones_change_nothing():
    data = {"a": ["", "b"]}
    for scrubber in (Scrubber([]), Scrubber([""])):
        assert scrubber.value(data) == {"a": ["", "b"]}
        assert scrubber.count == 0


def test_an_error_message_and_its_data_are_redacted():
    err = CallError(ErrorCode.TOOL_ERROR, f"failed for {SECRET}", data=[{"text": SECRET}])
    Scrubber([SECRET]).error(err)
    assert (err.message, str(err), err.data) == (
        f"failed for {REDACTED}",
        f"failed for {REDACTED}",
        [{"text": REDACTED}],
    )


@pytest.mark.parametrize("ascii_only", [False, True])
def test_a_secret_only_inside_json_text_in_a_string_is_found(ascii_only: bool):
    nested = json.dumps({"h": SECRET}, ensure_ascii=ascii_only)
    data = {"outer": [{"debug": nested.replace("/", "\\/")}], "other": nested}
    scrubber = Scrubber([SECRET])
    scrubber.value(data)
    assert data == {
        "outer": [{"debug": '{"h": "[redacted by Helm]"}'}],
        "other": '{"h": "[redacted by Helm]"}',
    }
    assert scrubber.count == 2


def test_unit_escapes_in_either_case_are_redacted_astral_characters_as_surrogate_pairs():
    secret = "tok😀é"
    upper = "\\u0074\\u006F\\u006B\\uD83D\\uDE00\\u00E9"
    scrubber = Scrubber([secret])
    assert scrubber.text(f"a {upper} b") == f"a {REDACTED} b"
    assert scrubber.text(upper.lower()) == REDACTED
    # Only in the answer's JSON text (the string holds the escapes): found by the pre-filter too.
    assert scrubber.value({"echo": [upper]}) == {"echo": [REDACTED]}
    assert scrubber.count == 3


def test_a_percent_encoded_byte_below_0x10_is_redacted_with_its_leading_zero():
    scrubber = Scrubber(["a\tb"])
    assert scrubber.text("x=a%09b") == f"x={REDACTED}"
    assert scrubber.value({"q": ["a%09b"]}) == {"q": [REDACTED]}


def test_a_space_written_as_a_plus_is_redacted_also_mixed_with_plain_spaces():
    scrubber = Scrubber(["a b c"])
    assert scrubber.text("q=a+b+c&r=a+b c") == f"q={REDACTED}&r={REDACTED}"
    # Neither the plain nor the all-plus form is in the answer: only the + says to look.
    assert scrubber.value({"q": "x a+b c y"}) == {"q": f"x {REDACTED} y"}
    assert scrubber.count == 3


@pytest.mark.parametrize(
    ("secret", "echoed"),
    [
        pytest.param("a/b", "a\\/b", id="escaped-slash"),
        pytest.param('\t"', '\\t\\"', id="only-characters-json-escapes"),
    ],
)
def test_a_json_escaped_secret_inside_a_string_of_the_answer_is_redacted(secret: str, echoed: str):
    scrubber = Scrubber([secret])
    assert scrubber.value({"body": f"x{echoed}y"}) == {"body": f"x{REDACTED}y"}
    assert scrubber.count == 1


def test_a_secret_mixing_percent_and_unit_escapes_is_redacted():
    scrubber = Scrubber(["tok"])
    assert scrubber.value({"v": "%74\\u006Fk"}) == {"v": REDACTED}
    assert scrubber.count == 1


class Watched(dict[str, object]):
    """An answer's object that notes every write: the walk writes each value back."""

    writes = 0

    def __setitem__(self, key: str, value: object) -> None:
        Watched.writes += 1
        super().__setitem__(key, value)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("nothing to see", id="no-encoding-at-all"),
        pytest.param("100% of \\u0041 C:\\dir a+b tok12", id="encodings-but-not-the-secret"),
    ],
)
def test_an_answer_holding_no_form_of_the_secret_is_not_walked(text: str):
    Watched.writes = 0
    answer = Watched(a=text, b=[1, Watched(c=text)])
    assert Scrubber(["tok123"]).value(answer) is answer
    assert Watched.writes == 0
    assert answer == {"a": text, "b": [1, {"c": text}]}
