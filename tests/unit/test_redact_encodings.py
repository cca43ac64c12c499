"""Every form of a secret in the documented set (docs/security.md) is redacted: each character
as itself, percent-encoded in upper- or lower-case hex (a space also as ``+``) or JSON-escaped,
in any mix, in a string or in JSON text nested in one."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus, urlencode

from hypothesis import given
from hypothesis import strategies as st

from broker.redact import REDACTED, Scrubber

SECRET = "ghp_s3cr/t+key=="


def test_pythons_default_quote_keeps_the_slash_and_is_still_redacted() -> None:
    form = quote(SECRET)  # "/" kept, "+" as %2B, "=" as %3D
    assert "/" in form and "%2B" in form
    assert Scrubber([SECRET]).text(f"url?t={form}&x=1") == f"url?t={REDACTED}&x=1"


def test_lower_case_hex_is_redacted() -> None:
    for form in (quote(SECRET).lower(), quote(SECRET, safe="").lower()):
        assert Scrubber([SECRET]).text(form) == REDACTED


def test_quote_plus_and_form_encoding_are_redacted() -> None:
    secret = "my key/with spaces+plus"
    scrubber = Scrubber([secret])
    assert scrubber.text(quote_plus(secret)) == REDACTED
    assert scrubber.text(urlencode({"token": secret, "n": 1})) == f"token={REDACTED}&n=1"
    assert scrubber.count == 2


def test_an_encoded_secret_inside_json_text_inside_an_answer_is_redacted() -> None:
    nested = json.dumps({"echo": quote(SECRET).lower()})
    data = {"body": nested, quote(SECRET): "key"}
    scrubber = Scrubber([SECRET])
    assert scrubber.value(data) == {"body": json.dumps({"echo": REDACTED}), REDACTED: "key"}
    assert scrubber.count == 2


def _hex(data: bytes, upper: bool) -> str:
    return "".join(f"%{b:02X}" if upper else f"%{b:02x}" for b in data)


def _unit_escape(char: str, upper: bool) -> str:
    raw = char.encode("utf-16-be")
    units = [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]
    return "".join(f"\\u{u:04X}" if upper else f"\\u{u:04x}" for u in units)


def _encoded(char: str, how: int) -> str:
    """One character in one form of the documented set."""
    if how == 0:
        return char
    if how in (1, 2):
        return _hex(char.encode("utf-8"), upper=how == 1)
    if how in (3, 4):
        return _unit_escape(char, upper=how == 3)
    if how == 5:
        return "+" if char == " " else char
    return json.dumps(char, ensure_ascii=how == 6)[1:-1]  # JSON's own escape, if it has one


SECRETS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=24)
WORDS = ("as_text", "echo", "plain", "v", REDACTED)
EVERY_FORM = range(8)
NOT_JSON_ESCAPED = (0, 1, 2, 5)  # JSON text adds its own escapes around these
SURROUND = st.text(st.sampled_from("=&?:; ,#<>()[]{}|!~^"), max_size=8)


@st.composite
def encoded_secrets(draw: st.DrawFn, forms: tuple[int, ...] | range = EVERY_FORM) -> tuple[str, str]:
    secret = draw(SECRETS.filter(lambda s: not any(s in word for word in WORDS)))
    hows = draw(st.lists(st.sampled_from(forms), min_size=len(secret), max_size=len(secret)))
    return secret, "".join(_encoded(c, h) for c, h in zip(secret, hows, strict=True))


@given(encoded_secrets(), SURROUND, SURROUND)
def test_every_form_in_the_documented_set_is_redacted_in_a_string(
    case: tuple[str, str], before: str, after: str
) -> None:
    secret, form = case
    scrubber = Scrubber([secret])
    scrubbed = scrubber.text(before + form + after)
    assert REDACTED in scrubbed
    assert scrubber.count >= 1
    if not set(before + after + secret) & set("%\\+") and not set(before + after) & set(secret):
        assert scrubbed == before + REDACTED + after


@given(encoded_secrets(NOT_JSON_ESCAPED), st.booleans())
def test_every_form_in_the_documented_set_is_redacted_in_nested_json_text(
    case: tuple[str, str], ascii_only: bool
) -> None:
    secret, form = case
    data = {"as_text": json.dumps({"echo": [form]}, ensure_ascii=ascii_only), "plain": [{"v": form}]}
    scrubber = Scrubber([secret])
    scrubbed = scrubber.value(data)
    assert scrubbed["plain"] == [{"v": REDACTED}]
    assert REDACTED in scrubbed["as_text"]
    assert form not in scrubbed["as_text"]
