"""Strict JSON parsing: a repeated key is refused at any depth, anything else reads as json.loads.
Compact text: UTF-8 kept, and always encodable as UTF-8."""

from __future__ import annotations

import json

import pytest

from broker.jsonutil import MAX_DEPTH, DuplicateKeyError, TooDeepError, compact_utf8, loads_strict


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"a": 1, "a": 1}', "a"),
        ('{"a": 1, "b": 2, "a": 3}', "a"),
        ('[{"ok": true}, {"x": {"y": 1, "z": 2, "y": 1}}]', "y"),
        ('{"\\u0061": 1, "a": 2}', "a"),  # the same key written two ways
    ],
)
def test_a_repeated_key_is_refused_and_named(text: str, key: str) -> None:
    with pytest.raises(DuplicateKeyError, match=f"duplicate key '{key}'"):
        loads_strict(text)


def test_objects_without_repeated_keys_read_as_json_loads_reads_them() -> None:
    text = json.dumps(
        {"rows": [{"id": i, "name": f"n{i}", "tags": ["a"], "q": i / 3} for i in range(50)], "e": {}}
    )
    assert loads_strict(text) == json.loads(text)
    assert list(loads_strict('{"b": 1, "a": 2}')) == ["b", "a"]  # the sender's key order


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_non_finite_numbers_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not valid JSON"):
        loads_strict(text)


def test_bytes_are_read_in_the_encoding_json_loads_detects() -> None:
    value = {"name": "café", "n": [1, 2]}
    for encoding in ("utf-8", "utf-16-le", "utf-32-be"):
        assert loads_strict(json.dumps(value, ensure_ascii=False).encode(encoding)) == value
    with pytest.raises(DuplicateKeyError):
        loads_strict(b'{"a": 1, "a": 2}')


@pytest.mark.parametrize("depth", [513, 1_400, 100_000])
def test_nesting_deeper_than_the_bound_is_a_value_error_never_a_recursion_error(depth: int) -> None:
    with pytest.raises(TooDeepError, match="nested more than 512 deep"):
        loads_strict("[" * depth + "]" * depth)
    with pytest.raises(TooDeepError, match="nested more than 512 deep"):
        loads_strict('{"a": ' * depth + "1" + "}" * depth)


def test_nesting_up_to_the_bound_is_parsed_with_brackets_in_strings_not_counted() -> None:
    assert loads_strict("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    text = "[" + ",".join(['"[[[[{{{{"'] * 300) + "]"
    assert len(loads_strict(text)) == 300


@pytest.mark.parametrize(
    ("value", "text", "size"),
    [
        ({"ok": True, "data": [1, "a"]}, '{"ok":true,"data":[1,"a"]}', 26),
        ({"é": "€😀"}, '{"é":"€😀"}', 16),  # kept as they are: 2, 3 and 4 bytes
        ({"id": "a\ud800b", "é": 1}, '{"id":"a\\ud800b","\\u00e9":1}', 28),  # a lone surrogate: all escaped
        ({"\udfff": "x"}, '{"\\udfff":"x"}', 14),
    ],
)
def test_compact_text_keeps_utf8_and_escapes_all_of_a_text_with_a_lone_surrogate(
    value: object, text: str, size: int
) -> None:
    shown, measured = compact_utf8(value)
    assert (shown, measured) == (text, size)
    assert measured == len(shown.encode("utf-8"))  # never raises: always UTF-8
    assert json.loads(shown) == value  # reads back as the same value
