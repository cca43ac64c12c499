"""Strict JSON: duplicate keys refused, nesting bounded, one canonical form for digests, and
compact text that is always valid UTF-8."""

from __future__ import annotations

import hashlib
import json
from typing import Any

MAX_DEPTH = 512
"""The deepest nesting of arrays and objects ``loads_strict`` accepts."""


_SHORT = 2 * MAX_DEPTH


class DuplicateKeyError(ValueError):
    """A JSON object repeats a key; the two readings of it would differ."""


class TooDeepError(ValueError):
    """A JSON text nests arrays and objects deeper than ``MAX_DEPTH``."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # dict() builds the object in C; a repeated key shows as a shorter dict. Only then is the
    # key looked for, so a valid object costs no Python loop.
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise DuplicateKeyError(f"duplicate key {key!r}")
            seen.add(key)
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Built once: json.loads with options builds a decoder and its scanner on every call, which
# costs a small message (a bridge call's arguments) more than parsing it.
_STRICT = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON, refusing duplicate keys, NaN/Infinity and nesting deeper than ``MAX_DEPTH``
    (``TooDeepError``, a ValueError: never a RecursionError)."""
    if not isinstance(text, str):
        text = text.decode(json.detect_encoding(text), "surrogatepass")  # as json.loads does
    try:
        value = _STRICT.decode(text)
    except RecursionError:
        raise TooDeepError(f"nested more than {MAX_DEPTH} deep") from None
    # A text of at most 2 * MAX_DEPTH characters, or with at most MAX_DEPTH opening brackets
    # (two fast counts), cannot nest deeper; only a larger one has its value measured.
    if len(text) > _SHORT and text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(value):
        raise TooDeepError(f"nested more than {MAX_DEPTH} deep")
    return value


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than ``MAX_DEPTH`` (level by level: no recursion)."""
    level = [value] if type(value) is dict or type(value) is list else []
    for _ in range(MAX_DEPTH):
        if not level:
            return False
        below: list[Any] = []
        for node in level:
            values = node.values() if type(node) is dict else node
            below.extend([v for v in values if type(v) is dict or type(v) is list])
        level = below
    return bool(level)


def canonical(value: Any) -> str:
    """The one canonical text of a JSON value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def digest(value: Any) -> str:
    """sha256 hex of the canonical form."""
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def compact_utf8(value: Any) -> tuple[str, int]:
    """``value`` as compact JSON text and its size in UTF-8 bytes. Other characters are kept as
    they are, but a lone surrogate (a server may send one) has no UTF-8 form: Qt's web bridge
    would drop it unseen and a UTF-8 count would fail, so a text with one is escaped whole to
    ASCII, which reads back as the same value."""
    text = _compact(value)
    if text.isascii():  # known without a look at the text: no copy to count its bytes
        return text, len(text)
    try:
        return text, len(text.encode("utf-8"))
    except UnicodeEncodeError:
        text = _compact_ascii(value)
        return text, len(text)


# No check for cycles (the C encoder still raises RecursionError on one): what is sent is a tree.
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
_compact_ascii = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
