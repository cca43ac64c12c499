"""Hidden characters made visible as text, for dialogs and terminals (``broker.visible``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.visible import hidden, json_visible, visible

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("a\u2028b\u2029c", "a[U+2028]b[U+2029]c", id="line-and-paragraph-separators"),
        pytest.param("\x1b[2J\x9b31m", "[U+001B][2J[U+009B]31m", id="esc-and-c1-csi"),
        pytest.param("evil.com\u202egpj.exe", "evil.com[U+202E]gpj.exe", id="bidi-override"),
        pytest.param("a\u200bb\u3164c\U000e0041", "a[U+200B]b[U+3164]c[U+E0041]", id="zero-width-filler-tag"),
        pytest.param("line\r\nnext\ttab", "line[U+000D]\nnext\ttab", id="carriage-return-shown-newline-kept"),
        pytest.param("10\u00a0000\u202f€ — ça", "10\u00a0000\u202f€ — ça", id="ordinary-text-unchanged"),
    ],
)
def test_hidden_characters_are_shown_as_code_points(text: str, shown: str) -> None:
    assert visible(text) == shown


@given(st.text())
def test_visible_text_holds_no_hidden_character_but_newlines_and_tabs(text: str) -> None:
    assert not any(hidden(ch) for ch in visible(text) if ch not in "\n\t")


@given(json_values)
def test_json_visible_keeps_the_value_and_prints_nothing_hidden(value: object) -> None:
    document = json_visible(json.dumps(value, indent=2, ensure_ascii=False))
    assert json.loads(document) == value
    assert not any(hidden(ch) for ch in document if ch != "\n")
