"""The argument check answers exactly as measuring the encoded JSON would, for any arguments.

Most calls are let through by a bound computed without encoding; the property is that this
shortcut never changes an answer: the same refusal (and message) or the same pass as encoding
the arguments and measuring them, for scalars at every edge (lone surrogates, NaN, huge
integers, control characters, long text), nested values, non-text keys and near the limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

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
