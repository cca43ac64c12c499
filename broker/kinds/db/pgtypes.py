"""Call arguments as the Python values asyncpg's binary codecs expect for each parameter type.

asyncpg encodes parameters by their server-side type: an ``int4`` parameter needs an ``int``, a
``date`` a ``datetime.date``. Extension arguments are plain JSON scalars, so Helm converts them
the way a SQL literal would be read (``"20"`` for an integer, an ISO string for a date, base64
for ``bytea``) and refuses what cannot be read, naming the argument.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from broker.errors import CallError, ErrorCode
from broker.kinds.db.values import Scalar

_INT = re.compile(r"^[+-]?[0-9]+$")
INT_TYPES = frozenset({"int2", "int4", "int8", "oid"})
FLOAT_TYPES = frozenset({"float4", "float8"})
TEXT_TYPES = frozenset(
    {"text", "varchar", "bpchar", "name", "char", "unknown", "citext", "json", "jsonb", "xml"}
)


def _int(v: Scalar) -> Any:
    if isinstance(v, bool):
        raise ValueError
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and _INT.match(v.strip()):
        return int(v)
    raise ValueError


def _float(v: Scalar) -> Any:
    if isinstance(v, bool):
        raise ValueError
    return float(v) if isinstance(v, int | float | str) else _fail()


def _numeric(v: Scalar) -> Any:
    if isinstance(v, bool) or v is None:
        raise ValueError
    try:
        return Decimal(str(v))
    except InvalidOperation as exc:
        raise ValueError from exc


def _bool(v: Scalar) -> Any:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false", "t", "f"):
        return v.lower().startswith("t")
    raise ValueError


def _text(v: Scalar) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _datetime(v: Scalar) -> Any:
    if not isinstance(v, str):
        raise ValueError
    return dt.datetime.fromisoformat(v)


def _timestamptz(v: Scalar) -> Any:
    value = _datetime(v)
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def _date(v: Scalar) -> Any:
    if not isinstance(v, str):
        raise ValueError
    return dt.date.fromisoformat(v)


def _time(v: Scalar) -> Any:
    if not isinstance(v, str):
        raise ValueError
    return dt.time.fromisoformat(v)


def _bytea(v: Scalar) -> Any:
    if not isinstance(v, str):
        raise ValueError
    try:
        return base64.b64decode(v, validate=True)
    except binascii.Error as exc:
        raise ValueError from exc


def _fail() -> Any:
    raise ValueError


def _as_is(v: Scalar) -> Any:
    return v


_BY_TYPE: dict[str, tuple[Callable[[Scalar], Any], str]] = {
    **{t: (_int, "an integer") for t in INT_TYPES},
    **{t: (_float, "a number") for t in FLOAT_TYPES},
    **{t: (_text, "a string") for t in TEXT_TYPES},
    "numeric": (_numeric, "a number or a numeric string"),
    "bool": (_bool, "a boolean"),
    "timestamp": (_datetime, "an ISO date-time string"),
    "timestamptz": (_timestamptz, "an ISO date-time string"),
    "date": (_date, "an ISO date string"),
    "time": (_time, "an ISO time string"),
    "bytea": (_bytea, "a base64 string"),
    "uuid": (_text, "a UUID string"),
}


def coerce(args: Sequence[Scalar], types: Sequence[str]) -> list[Any]:
    """Each argument converted for its parameter type (``types`` are PostgreSQL type names)."""
    out: list[Any] = []
    for i, (value, type_name) in enumerate(zip(args, types, strict=True)):
        if value is None:
            out.append(None)
            continue
        convert, wanted = _BY_TYPE.get(type_name, (_as_is, f"a value of type {type_name}"))
        try:
            out.append(convert(value))
        except (ValueError, TypeError, OverflowError) as exc:
            raise CallError(
                ErrorCode.REFUSED, f"the argument for ${i + 1} must be {wanted} for this query"
            ) from exc
    return out
