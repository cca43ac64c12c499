"""Strict JSON: duplicate keys refused, one canonical form for digests."""

from __future__ import annotations

import hashlib
import json
from typing import Any


class DuplicateKeyError(ValueError):
    """A JSON object repeats a key; the two readings of it would differ."""


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
    """Parse JSON, refusing duplicate keys and NaN/Infinity."""
    if not isinstance(text, str):
        text = text.decode(json.detect_encoding(text), "surrogatepass")  # as json.loads does
    return _STRICT.decode(text)


def canonical(value: Any) -> str:
    """The one canonical text of a JSON value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def digest(value: Any) -> str:
    """sha256 hex of the canonical form."""
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()
