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


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON, refusing duplicate keys and NaN/Infinity."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def canonical(value: Any) -> str:
    """The one canonical text of a JSON value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def digest(value: Any) -> str:
    """sha256 hex of the canonical form."""
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()
