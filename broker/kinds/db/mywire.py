"""The MySQL client/server protocol for the commands Helm sends on an open connection.

aiomysql opens and authenticates the connection (``aiomysql_private``); from then on Helm
speaks the protocol itself, for two reasons:

* Arguments travel in ``COM_STMT_EXECUTE`` as typed binary values of a server-side prepared
  statement, so the server never reads an argument as SQL, whatever the statement's text.
* The commands of one call are written at once and their replies read back in order
  (pipelining), so a read costs one round trip. MariaDB (10.2+) runs ``COM_STMT_EXECUTE`` with
  statement id -1 on the statement prepared just before, so prepare and execute ride together.

The connection offers neither multiple statements nor local files, and asks for the classic EOF
packets (no ``CLIENT_DEPRECATE_EOF``), which is what this reader expects.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from broker.errors import CallError, ErrorCode
from broker.kinds.db import mytypes
from broker.kinds.db.mytypes import Column, lenenc_int
from broker.kinds.db.values import MAX_ROW_BYTES, RowBudget, plain

COM_QUERY, COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_RESET_CONNECTION = 0x03, 0x16, 0x17, 0x1F
LAST_PREPARED = 0xFFFFFFFF
MAX_PAYLOAD = 0xFFFFFF
# A reply packet larger than this cannot fit the row budget (a row's JSON is never much smaller
# than its wire form), so it is refused before it is read.
MAX_REPLY = MAX_ROW_BYTES + 64 * 1024
STATUS_NO_BACKSLASH_ESCAPES = 0x0200
STATUS_MORE_RESULTS = 0x0008
TOO_LARGE = "the query returned more than 1 MiB of row data; select less"
LOCAL_FILE_REFUSED = "Helm never sends local files to the database server (LOAD DATA LOCAL is off)"


class ServerError(Exception):
    """The server answered a command with an error packet; the connection is still in step."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message


class ProtocolError(Exception):
    """A reply Helm cannot read; the connection must be dropped."""


@dataclass(frozen=True)
class Ok:
    affected_rows: int
    status: int


@dataclass(frozen=True)
class PreparedStatement:
    statement_id: int
    columns: int
    params: int


def query(sql: str) -> bytes:
    return bytes((COM_QUERY,)) + sql.encode("utf-8")


def prepare(sql: str) -> bytes:
    return bytes((COM_STMT_PREPARE,)) + sql.encode("utf-8")


def execute(statement_id: int, args: Sequence[Any]) -> bytes:
    """COM_STMT_EXECUTE without a cursor, with every argument's type sent along."""
    head = struct.pack("<BIBI", COM_STMT_EXECUTE, statement_id, 0, 1)
    if not args:
        return head
    nulls = bytearray((len(args) + 7) // 8)
    types, values = [], []
    for i, arg in enumerate(args):
        if arg is None:
            nulls[i // 8] |= 1 << (i % 8)
        t, v = mytypes.param(arg)
        types.append(t)
        values.append(v)
    return head + bytes(nulls) + b"\x01" + b"".join(types) + b"".join(values)


def reset() -> bytes:
    return bytes((COM_RESET_CONNECTION,))


Step = tuple[bytes, Callable[[], Awaitable[Any]]]
"""A command and the reader of its reply."""


class Wire:
    """Commands out, replies in, on one connection's stream."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self.replies = 0
        """How many replies were read: none means the server may never have seen the commands."""

    async def exchange(self, steps: Sequence[Step]) -> list[Any]:
        """Send every command at once, then read each reply in order.

        A reply that is an error packet is returned as a ``ServerError`` in its place, so every
        reply is read and the connection stays in step; anything else that goes wrong raises.
        """
        frames = b"".join(_frame(command) for command, _read in steps)
        self._writer.write(frames)
        await self._writer.drain()
        replies: list[Any] = []
        for _command, read in steps:
            try:
                replies.append(await read())
            except ServerError as err:
                replies.append(err)
            self.replies += 1
        return replies

    async def packet(self) -> bytes:
        header = await self._reader.readexactly(4)
        length = int.from_bytes(header[:3], "little")
        if length > MAX_REPLY:
            raise CallError(ErrorCode.TOO_LARGE, TOO_LARGE)
        return await self._reader.readexactly(length)

    async def ok(self) -> Ok:
        data = await self.packet()
        if data[:1] == b"\x00":
            return _ok(data)
        raise _unexpected(data)

    async def prepared(self) -> PreparedStatement:
        data = await self.packet()
        if data[:1] != b"\x00":
            raise _unexpected(data)
        statement_id, columns, params = struct.unpack_from("<IHH", data, 1)
        for count in (params, columns):
            if count:
                for _ in range(count):
                    await self.packet()
                await self._eof()
        return PreparedStatement(statement_id, columns, params)

    async def rows(self, *, binary: bool) -> dict[str, Any]:
        """A statement's result as ``{columns, rows}`` within the row budget (none: no columns)."""
        first = await self.packet()
        if first[:1] == b"\x00":
            _check_single(_ok(first).status)
            return {"columns": [], "rows": []}
        columns = await self._columns(first)
        budget = RowBudget([c.name for c in columns], [plain] * len(columns))
        decode = _binary_row(columns) if binary else _text_row(columns)
        while True:
            data = await self.packet()
            if data[:1] == b"\xfe" and len(data) < 9:
                _check_single(struct.unpack_from("<H", data, 3)[0])
                return budget.result()
            if data[:1] == b"\xff":
                raise _unexpected(data)
            budget.add(decode(data))

    async def affected(self) -> int:
        """A write's row count: the first result's (an OK packet's count, or the rows returned).

        A procedure (CALL) may send several results; the rest are read and left.
        """
        counted: int | None = None
        more = True
        while more:
            count, more = await self._result_count()
            counted = count if counted is None else counted
        return counted or 0

    async def _result_count(self) -> tuple[int, bool]:
        first = await self.packet()
        if first[:1] == b"\x00":
            ok = _ok(first)
            return ok.affected_rows, bool(ok.status & STATUS_MORE_RESULTS)
        await self._columns(first)
        count = 0
        while True:
            data = await self.packet()
            if data[:1] == b"\xfe" and len(data) < 9:
                return count, bool(struct.unpack_from("<H", data, 3)[0] & STATUS_MORE_RESULTS)
            if data[:1] == b"\xff":
                raise _unexpected(data)
            count += 1

    async def _columns(self, first: bytes) -> list[Column]:
        if first[:1] == b"\xfb":  # the server asking for a local file, which Helm never offered
            raise CallError(ErrorCode.REFUSED, LOCAL_FILE_REFUSED)
        if first[:1] == b"\xff":
            raise _unexpected(first)
        count, _pos = lenenc_int(first, 0)
        columns = [_column(await self.packet()) for _ in range(count)]
        await self._eof()
        return columns

    async def _eof(self) -> None:
        data = await self.packet()
        if not (data[:1] == b"\xfe" and len(data) < 9):
            raise _unexpected(data)


def _frame(payload: bytes) -> bytes:
    """One command as packets, each starting a new sequence (ids from 0)."""
    out, seq = [], 0
    while True:
        chunk, payload = payload[:MAX_PAYLOAD], payload[MAX_PAYLOAD:]
        out.append(len(chunk).to_bytes(3, "little") + bytes((seq,)) + chunk)
        seq = (seq + 1) % 256
        if len(chunk) < MAX_PAYLOAD:
            return b"".join(out)


def _ok(data: bytes) -> Ok:
    affected, pos = lenenc_int(data, 1)
    _insert_id, pos = lenenc_int(data, pos)
    status = struct.unpack_from("<H", data, pos)[0]
    return Ok(affected, status)


def _check_single(status: int) -> None:
    if status & STATUS_MORE_RESULTS:
        raise ProtocolError("a statement returned more than one result")


def _unexpected(data: bytes) -> Exception:
    if data[:1] == b"\xff":
        code = struct.unpack_from("<H", data, 1)[0]
        message = data[9:] if data[3:4] == b"#" else data[3:]
        return ServerError(code, message.decode("utf-8", "replace"))
    return ProtocolError(f"unexpected reply 0x{data[:1].hex()}")


def _column(data: bytes) -> Column:
    pos, name = 0, ""
    for field in range(6):  # catalog, schema, table, org_table, name, org_name
        length, pos = lenenc_int(data, pos)
        if field == 4:
            name = data[pos : pos + length].decode("utf-8", "replace")
        pos += length
    _fixed, pos = lenenc_int(data, pos)
    charset, _length, field_type, flags, decimals = struct.unpack_from("<HIBHB", data, pos)
    return Column(name, field_type, flags, charset, decimals)


def _text_row(columns: Sequence[Column]) -> Callable[[bytes], list[Any]]:
    converters = [mytypes.from_text(c) for c in columns]

    def decode(data: bytes) -> list[Any]:
        row: list[Any] = []
        pos = 0
        for convert in converters:
            if data[pos] == 0xFB:
                row.append(None)
                pos += 1
                continue
            length, pos = lenenc_int(data, pos)
            row.append(convert(data[pos : pos + length]))
            pos += length
        return row

    return decode


def _binary_row(columns: Sequence[Column]) -> Callable[[bytes], list[Any]]:
    readers = [mytypes.binary_reader(c) for c in columns]
    start = 1 + (len(columns) + 7 + 2) // 8  # the header byte, then the NULL bitmap (offset 2)

    def decode(data: bytes) -> list[Any]:
        row: list[Any] = []
        pos = start
        for i, read in enumerate(readers):
            bit = i + 2
            if data[1 + bit // 8] & (1 << (bit % 8)):
                row.append(None)
                continue
            value, pos = read(data, pos)
            row.append(value)
        return row

    return decode
