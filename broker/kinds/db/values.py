"""Values in and out of a database call: argument checks, JSON-safe results, the row limits.

Results follow the contract: bytes as base64, 64-bit integers and decimals as strings, dates
and times as ISO strings, NULL as null. Which integers count as 64-bit depends on what the
engine tells Helm: PostgreSQL and MySQL columns typed bigint always give strings; SQLite has no
column types at run time, so its integers are numbers while they fit a JavaScript number
exactly (up to 2^53-1 either way) and strings beyond.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from broker.errors import CallError, ErrorCode

MAX_ROWS = 1000
FETCH_ROWS = MAX_ROWS + 1
"""Helm fetches one row more than the limit, to tell a full result from a cut one."""
MAX_ROW_BYTES = 1024 * 1024
MAX_STRING_ARG = 4096
SAFE_INT = 2**53 - 1
INT64 = (-(2**63), 2**63 - 1)

Scalar = str | int | float | bool | None


def bind_args(params: Sequence[str], args: Mapping[str, Any]) -> list[Scalar]:
    """The values for the statement's placeholders, in order; refused when anything is off.

    Arguments the query does not name are ignored, as in every kind: a widget usually passes
    all of its settings.
    """
    out: list[Scalar] = []
    for name in params:
        if name not in args:
            raise CallError(ErrorCode.REFUSED, f"missing argument {name!r} (pass null for NULL)")
        out.append(check_scalar(name, args[name]))
    return out


def check_scalar(name: str, value: Any) -> Scalar:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise CallError(ErrorCode.REFUSED, f"argument {name!r} does not fit a 64-bit integer")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CallError(ErrorCode.REFUSED, f"argument {name!r} must be a finite number")
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING_ARG:
            raise CallError(
                ErrorCode.REFUSED, f"argument {name!r} is longer than {MAX_STRING_ARG} characters"
            )
        if "\x00" in value:
            raise CallError(ErrorCode.REFUSED, f"argument {name!r} must not contain NUL characters")
        return value
    raise CallError(ErrorCode.REFUSED, f"argument {name!r} must be a string, a number, a boolean or null")


def to_json(value: Any, *, big: bool = False) -> Any:
    """One database value as JSON. ``big``: the column is a 64-bit integer type."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return str(value) if big or abs(value) > SAFE_INT else value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _duration(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [to_json(v, big=big) for v in value]
    return str(value)


def _duration(td: dt.timedelta) -> str:
    """An ISO 8601 duration (``P1DT2H3M4.5S``), the unambiguous text form of an interval."""
    sign = "-" if td < dt.timedelta(0) else ""
    td = abs(td)
    hours, rest = divmod(td.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    secs = f"{seconds}.{td.microseconds:06d}".rstrip("0").rstrip(".") if td.microseconds else str(seconds)
    return f"{sign}P{td.days}DT{hours}H{minutes}M{secs}S"


Converter = Callable[[Any], Any]
# One encoder for every row (json.dumps with options builds a new one per call).
_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class RowBudget:
    """Collects converted rows; raises too_many_rows / too_large the moment a limit is passed.

    Row data is measured as the JSON text of each converted row, so 1 MiB means what the
    extension would receive. While a cheap upper bound of that size stays under the limit, no
    row is encoded; once the bound reaches it, the rows are measured exactly from then on.
    """

    def __init__(self, columns: Sequence[str], converters: Sequence[Converter]) -> None:
        self.columns = list(columns)
        self._converters = list(converters)
        self.rows: list[list[Any]] = []
        self._bytes = 0
        self._exact = False
        self._plain = all(conv is plain for conv in self._converters)

    def add_all(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            self.add(row)

    def add(self, row: Sequence[Any]) -> None:
        if len(self.rows) >= MAX_ROWS:
            raise CallError(
                ErrorCode.TOO_MANY_ROWS,
                f"the query returned more than {MAX_ROWS} rows; add a LIMIT (nothing was cut)",
            )
        bound: int | None = None
        if self._plain and not self._exact and len(row) == len(self._converters):
            converted, bound = _plain_row(row)
        else:
            converted = [conv(v) for conv, v in zip(self._converters, row, strict=True)]
        self._count(converted, bound)
        self.rows.append(converted)

    def _count(self, converted: list[Any], bound: int | None) -> None:
        """Add the row's size (``bound``: its size bound, known already); raise past 1 MiB."""
        if self._exact:
            self._bytes += _json_size(converted)
        else:
            self._bytes += _size_bound(converted) if bound is None else bound
            if self._bytes > MAX_ROW_BYTES:
                self._exact = True
                self._bytes = sum(map(_json_size, self.rows)) + _json_size(converted)
        if self._bytes > MAX_ROW_BYTES:
            raise CallError(
                ErrorCode.TOO_LARGE, "the query returned more than 1 MiB of row data; select less"
            )

    @property
    def full(self) -> bool:
        """True once another row would break the row limit (stop fetching after FETCH_ROWS)."""
        return len(self.rows) >= MAX_ROWS

    def result(self) -> dict[str, Any]:
        return {"columns": self.columns, "rows": self.rows}


def _json_size(row: list[Any]) -> int:
    return len(_compact_json(row).encode())


def _plain_row(row: Sequence[Any]) -> tuple[list[Any], int]:
    """``[plain(v) for v in row]`` and ``_size_bound`` of it, in one pass (SQLite's rows).

    The size rules are ``_size_bound``'s, written out again here: calling it per value is the
    cost this pass exists to save."""
    converted = []
    total = len(row) + 1
    for value in row:
        kind = value.__class__
        if kind is str:
            total += 6 * len(value) + 2
        elif value is None or kind is bool:
            total += 5
        elif kind is int and -SAFE_INT <= value <= SAFE_INT:
            total += 24
        else:
            value = to_json(value)
            total += _size_bound([value]) - 2
        converted.append(value)
    return converted, total


def _size_bound(row: list[Any]) -> int:
    """At least the size of the row's compact JSON, without encoding it.

    A character takes at most 6 bytes (``\\u001f``), a number at most 24 (converted integers
    are within ±2^53), null and booleans at most 5; anything else is measured exactly.
    """
    total = len(row) + 1  # the brackets and the commas
    for value in row:
        kind = value.__class__
        if kind is str:
            total += 6 * len(value) + 2
        elif value is None or kind is bool:
            total += 5
        elif kind is int or kind is float:
            total += 24
        else:
            total += _json_size(value)
    return total


def plain(value: Any) -> Any:
    kind = value.__class__
    if kind is str or value is None:  # the common values first, without the general dispatch
        return value
    if kind is int:
        return value if -SAFE_INT <= value <= SAFE_INT else str(value)
    return to_json(value)


def bigint(value: Any) -> Any:
    return to_json(value, big=True)
