"""The argument check answers exactly as measuring the encoded JSON would, for any arguments.

Most calls are let through by a bound computed without encoding; the property is that this
shortcut never changes an answer: the same refusal (and message) or the same pass as encoding
the arguments and measuring them, for scalars at every edge (lone surrogates, NaN, huge
integers, control characters, long text), nested values, non-text keys and near the limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import broker.arguments
from broker.arguments import MAX_CALL_BYTES, check_arguments
from broker.errors import CallError

text = st.one_of(
    st.text(st.sampled_from('ab"\\\x00\x1f\x7fé€\U0001f600\ud800'), max_size=12),
    st.text(st.characters(exclude_categories=()), max_size=8),
)
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), text)
value = st.recursive(
    scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=6
)
keys = st.one_of(text, st.integers(), st.none())
arguments = st.dictionaries(keys, value, max_size=5)


def measured(args: Any, scalars_only: bool) -> str | None:
    """The reference: encode, measure, then the scalar rule (None: accepted)."""
    if not isinstance(args, Mapping):
        return "refused"
    try:
        size = len(json.dumps(args, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        return "refused"
    if size > MAX_CALL_BYTES:
        return "too_large"
    if scalars_only and any(
        v is not None and not isinstance(v, str | int | float | bool) for v in args.values()
    ):
        return "refused"
    return None


def checked(args: Any, scalars_only: bool) -> str | None:
    try:
        check_arguments(args, scalars_only)
    except CallError as err:
        return err.code.value
    return None


@given(arguments, st.booleans())
@example({"a": "x" * (MAX_CALL_BYTES // 6)}, True)  # just under the bound: passes unencoded
@example({"a": "x" * (MAX_CALL_BYTES - 7)}, True)  # over the bound, within the limit once measured
@example({"a": "x" * MAX_CALL_BYTES}, True)  # too large
@example({"a": "\x00" * (MAX_CALL_BYTES // 5)}, False)  # escapes make it too large
@example({"n": 10**19, "m": -(10**19), "f": 1e308, "g": -5e-324}, True)
@example({"n": 10**5000}, True)  # more digits than Python converts: not plain JSON
@example({"f": float("inf")}, True)
@example({"s": "\ud800"}, True)
@example({"\ud800": 1}, True)
@example({1: "one"}, True)
@example({"a": [1, 2]}, True)
@example({"a": [1, 2]}, False)
def test_the_argument_check_answers_as_measuring_the_json_would(
    args: dict[Any, Any], scalars_only: bool
) -> None:
    assert checked(args, scalars_only) == measured(args, scalars_only)


def test_arguments_that_are_not_an_object_are_refused() -> None:
    for args in ([], "x", None, 3):
        assert checked(args, False) == "refused"


@pytest.fixture
def monkeypatch_encoder(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Records every call that is encoded to be measured."""
    encoded: list[object] = []
    real = broker.arguments._plain_json

    def recording(args: object) -> str:
        encoded.append(args)
        return real(args)

    monkeypatch.setattr(broker.arguments, "_plain_json", recording)
    return encoded


# The limit as the contract states it, not as the module spells it.
LIMIT = 262_144


def test_a_call_of_exactly_256_kib_passes_and_one_byte_more_is_too_large() -> None:
    framing = len('{"a": ""}')
    assert checked({"a": "x" * (LIMIT - framing)}, True) is None
    assert checked({"a": "x" * (LIMIT - framing + 1)}, True) == "too_large"
    assert checked({"a": "é" * ((LIMIT - framing) // 2)}, True) is None
    assert checked({"a": "é" * ((LIMIT - framing) // 2 + 1)}, True) == "too_large"


small_value = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        1,
        -(10**19),
        10**300,
        -(10**300),
        1.5e300,
        float("nan"),
        float("inf"),
        "",
        "ab",
        "\x00\x1f",
        "é",
        "\ud800",
        [1],
        {"k": 1},
    ]
)


@settings(max_examples=25)
@given(st.integers(0, 40_000), small_value, st.booleans())
@example(23_000, 1, True)
@example(27_000, None, True)
@example(6_600, 1.5e300, True)
@example(900, 10**300, True)
@example(1, float("nan"), False)
@example(1, "\ud800", False)
def test_any_number_of_small_arguments_is_measured_against_the_limit(
    count: int, value: object, scalars_only: bool
) -> None:
    args = {f"k{i}": value for i in range(count)}
    assert checked(args, scalars_only) == measured(args, scalars_only)


plain_key = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=8)
plain_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20) + 1, 10**20 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=20),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.dictionaries(plain_key, plain_scalar, max_size=12), scalars_only=st.booleans())
def test_a_small_flat_call_of_plain_ascii_scalars_is_checked_without_encoding_it(
    args: dict[str, object], scalars_only: bool, monkeypatch_encoder: list[object]
) -> None:
    check_arguments(args, scalars_only)
    assert monkeypatch_encoder == []


def test_only_a_call_whose_bound_passes_the_limit_is_encoded(monkeypatch_encoder: list[object]) -> None:
    # The bound: 2 for the braces, then per entry 6 per key character, 6 per text character and
    # 30 (a number's 24 and 6 for quotes, colon and comma). Here: 2 + 3 * 36 + 6 * 43_672.
    at_the_bound = {"a": "x" * 43_672, "b": None, "c": 1.5}
    check_arguments(at_the_bound, True)
    assert monkeypatch_encoder == []
    check_arguments({**at_the_bound, "a": "x" * 43_673}, True)
    assert len(monkeypatch_encoder) == 1


@pytest.mark.parametrize("value", [{"a": 1}, [1], ("t",), []])
def test_with_scalars_only_an_argument_that_is_not_a_scalar_is_refused(value: object) -> None:
    with pytest.raises(CallError, match="must be a string, a number, a boolean or null"):
        check_arguments({"a": value}, True)


@pytest.mark.parametrize("value", [None, "s", 1, 1.5, True, False])
def test_with_scalars_only_every_scalar_and_null_is_accepted(value: object) -> None:
    check_arguments({"a": value, "nested": 1}, True)


def test_without_scalars_only_nested_values_are_accepted() -> None:
    check_arguments({"a": {"b": [1, None, "c"]}}, False)


def test_a_mapping_that_is_not_a_dict_is_refused_as_not_plain_json_and_a_list_as_not_an_object() -> None:
    with pytest.raises(CallError, match="must be plain JSON values"):
        check_arguments(MappingProxyType({"a": 1}), False)
    with pytest.raises(CallError, match="must be a JSON object"):
        check_arguments([("a", 1)], False)


@pytest.mark.parametrize(
    ("number", "encoded"), [(10**20 - 1, 0), (-(10**20) + 1, 0), (10**20, 1), (-(10**20), 1)]
)
def test_an_integer_of_21_digits_or_more_is_measured_exactly(
    number: int, encoded: int, monkeypatch_encoder: list[object]
) -> None:
    check_arguments({"n": number}, True)
    assert len(monkeypatch_encoder) == encoded
