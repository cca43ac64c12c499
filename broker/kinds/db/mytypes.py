"""MySQL column values as the contract's JSON, from the text and the binary protocol alike.

A statement without arguments comes back in the text protocol (every value is the server's
text), one with arguments in the binary protocol (typed values). Both give the same JSON:

* integers are numbers, ``BIGINT`` always a string; ``DECIMAL`` is the server's exact text;
* ``FLOAT`` has the six significant digits the server prints, ``DOUBLE`` is the double itself;
* binary strings (``BLOB``, ``BINARY``, ``BIT``, geometry: the binary character set) are base64,
  other strings text;
* ``DATE``, ``DATETIME``, ``TIMESTAMP`` and ``TIME`` are the text the server prints, zero
  dates included, with as many fraction digits as the column declares.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Field types (the protocol's column type byte).
DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24 = range(10)
DATE, TIME, DATETIME, YEAR = 10, 11, 12, 13
NEWDECIMAL, STRING = 246, 254
BINARY_CHARSET = 63
UNSIGNED_FLAG = 32
TEMPORAL = frozenset({DATE, DATETIME, TIMESTAMP, TIME})
INTEGERS = {TINY: "b", SHORT: "h", YEAR: "h", INT24: "i", LONG: "i", LONGLONG: "q"}

FromText = Callable[[bytes], Any]
Reader = Callable[[bytes, int], tuple[Any, int]]
"""Reads one binary-protocol value at an offset: (JSON value, offset after it)."""


@dataclass(frozen=True)
class Column:
    name: str
    type: int
    flags: int
    charset: int
    decimals: int


def from_text(col: Column) -> FromText:
    """How a text-protocol value of ``col`` becomes JSON."""
    if col.type == LONGLONG:
        return lambda b: str(int(b))
    if col.type in INTEGERS:
        return int
    if col.type == FLOAT:
        return lambda b: _json_float(float(b))
    if col.type == DOUBLE:
        return lambda b: _json_float(float(b))
    if col.type in TEMPORAL or col.type in (DECIMAL, NEWDECIMAL):
        return _ascii
    return _bytes_value if col.charset == BINARY_CHARSET else _text


def binary_reader(col: Column) -> Reader:
    """How a binary-protocol value of ``col`` is read and becomes JSON."""
    if col.type in INTEGERS:
        code = INTEGERS[col.type]
        fmt = struct.Struct("<" + (code.upper() if col.flags & UNSIGNED_FLAG else code))
        big = col.type == LONGLONG
        return lambda data, pos: (
            str(fmt.unpack_from(data, pos)[0]) if big else fmt.unpack_from(data, pos)[0],
            pos + fmt.size,
        )
    if col.type == FLOAT:
        return lambda data, pos: (_json_float(float(f"{_F32.unpack_from(data, pos)[0]:.6g}")), pos + 4)
    if col.type == DOUBLE:
        return lambda data, pos: (_json_float(_F64.unpack_from(data, pos)[0]), pos + 8)
    if col.type in (DATE, DATETIME, TIMESTAMP):
        return lambda data, pos: _read_datetime(data, pos, col)
    if col.type == TIME:
        return lambda data, pos: _read_time(data, pos, col.decimals)
    convert = from_text(col)

    def lenenc_value(data: bytes, pos: int) -> tuple[Any, int]:
        length, pos = lenenc_int(data, pos)
        return convert(data[pos : pos + length]), pos + length

    return lenenc_value


_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def lenenc_int(data: bytes, pos: int) -> tuple[int, int]:
    """A length-encoded integer at ``pos``: (value, offset after it)."""
    first = data[pos]
    if first < 0xFB:
        return first, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(data[pos + 1 : pos + 1 + size], "little"), pos + 1 + size


def _ascii(b: bytes) -> str:
    return b.decode("ascii", "replace")


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _bytes_value(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def _json_float(x: float) -> float | str:
    return x if x == x and x not in (float("inf"), float("-inf")) else str(x)


def _fraction(micro: int, decimals: int) -> str:
    """The fraction the server prints: the column's digits, or all six when it declares none."""
    if 0 < decimals <= 6:
        return "." + f"{micro:06d}"[:decimals]
    return f".{micro:06d}" if micro and decimals > 6 else ""


def _read_datetime(data: bytes, pos: int, col: Column) -> tuple[str, int]:
    length = data[pos]
    body = data[pos + 1 : pos + 1 + length]
    year = int.from_bytes(body[0:2], "little") if length >= 4 else 0
    month, day = (body[2], body[3]) if length >= 4 else (0, 0)
    text = f"{year:04d}-{month:02d}-{day:02d}"
    if col.type != DATE:
        hour, minute, second = (body[4], body[5], body[6]) if length >= 7 else (0, 0, 0)
        micro = int.from_bytes(body[7:11], "little") if length >= 11 else 0
        text += f" {hour:02d}:{minute:02d}:{second:02d}" + _fraction(micro, col.decimals)
    return text, pos + 1 + length


def _read_time(data: bytes, pos: int, decimals: int) -> tuple[str, int]:
    length = data[pos]
    body = data[pos + 1 : pos + 1 + length]
    negative = length >= 8 and body[0] == 1
    days = int.from_bytes(body[1:5], "little") if length >= 8 else 0
    hour, minute, second = (body[5], body[6], body[7]) if length >= 8 else (0, 0, 0)
    micro = int.from_bytes(body[8:12], "little") if length >= 12 else 0
    hours = days * 24 + hour
    text = f"{'-' if negative else ''}{hours:02d}:{minute:02d}:{second:02d}" + _fraction(micro, decimals)
    return text, pos + 1 + length


# -- parameters ------------------------------------------------------------------------------
_PARAM_TYPES = {
    type(None): (NULL, 0), bool: (TINY, 0), int: (LONGLONG, 0), float: (DOUBLE, 0), str: (STRING, 0)
}  # fmt: skip


def param(value: Any) -> tuple[bytes, bytes]:
    """One argument for COM_STMT_EXECUTE: (type and flag bytes, value bytes; empty for NULL)."""
    field_type, flag = _PARAM_TYPES[type(value)]
    types = bytes((field_type, flag))
    if value is None:
        return types, b""
    if isinstance(value, bool):
        return types, b"\x01" if value else b"\x00"
    if isinstance(value, int):
        return types, struct.pack("<q", value)
    if isinstance(value, float):
        return types, _F64.pack(value)
    data = str(value).encode("utf-8")
    return types, lenenc_bytes(data)


def lenenc_bytes(data: bytes) -> bytes:
    n = len(data)
    if n < 0xFB:
        head = bytes((n,))
    elif n < 1 << 16:
        head = b"\xfc" + n.to_bytes(2, "little")
    elif n < 1 << 24:
        head = b"\xfd" + n.to_bytes(3, "little")
    else:
        head = b"\xfe" + n.to_bytes(8, "little")
    return head + data
