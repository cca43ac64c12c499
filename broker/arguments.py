"""The generic check of a call's arguments: a JSON object of plain JSON values, within the size
limit, scalars only where the kind says so.

Every call is checked; most calls pass a few short scalars. For those the size is bounded
without encoding anything (an ASCII character takes at most 6 bytes as JSON, ``\\u001f``; a
number at most 24), and only a call whose bound reaches the limit, or whose values are not
plain ASCII scalars of the built-in types, is encoded to be measured exactly. Both ways give
the same answer for every input.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from broker.errors import CallError, ErrorCode

MAX_CALL_BYTES = 256 * 1024
"""The largest call message (the canonical JSON of the arguments) Helm accepts."""

_NUMBER_BYTES = 24
"""At most the JSON text of a float, or of an int below ``_SHORT_INT``."""
_SHORT_INT = 10**20


def check_arguments(args: Any, scalars_only: bool) -> None:
    """Raise ``CallError`` (``refused``, ``too_large``) unless ``args`` is a JSON object of plain
    JSON values within ``MAX_CALL_BYTES``; with ``scalars_only``, every value (also one no
    placeholder uses) a string, a number, a boolean or null."""
    if args.__class__ is not dict and not isinstance(args, Mapping):  # a dict: no ABC check
        raise CallError(ErrorCode.REFUSED, "the arguments must be a JSON object")
    if _within_bound(args):
        return  # flat, plain and small: every rule below holds
    try:
        size = _utf8_size(_plain_json(args))
    except (TypeError, ValueError, RecursionError) as exc:
        raise CallError(ErrorCode.REFUSED, "the arguments must be plain JSON values") from exc
    if size > MAX_CALL_BYTES:
        raise CallError(ErrorCode.TOO_LARGE, "the call message is larger than 256 KiB")
    if scalars_only:
        for name, value in args.items():
            if value is not None and not isinstance(value, str | int | float | bool):
                raise CallError(
                    ErrorCode.REFUSED, f"argument {name!r} must be a string, a number, a boolean or null"
                )


def _within_bound(args: Mapping[str, Any]) -> bool:
    """True when ``args`` is a dict of ASCII text keys and built-in scalars (ASCII text, finite
    floats, short ints, booleans, null) whose JSON surely fits the limit. False means "measure
    it": nothing is refused here."""
    if args.__class__ is not dict:
        return False
    bound = 2
    for key, value in args.items():
        if key.__class__ is not str or not key.isascii():
            return False
        kind = value.__class__
        if kind is str:
            if not value.isascii():
                return False  # measured exactly (and a lone surrogate refused) below
            bound += 6 * len(value)
        elif kind is int:
            if not -_SHORT_INT < value < _SHORT_INT:
                return False
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif value is not None and kind is not bool:
            return False
        bound += 6 * len(key) + _NUMBER_BYTES + 6  # quotes, colon, comma
    return bound <= MAX_CALL_BYTES


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


_plain_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
"""Arguments as JSON text, to measure them (made once: ``json.dumps`` with options builds an
encoder per call); raises for anything that is not plain JSON."""
