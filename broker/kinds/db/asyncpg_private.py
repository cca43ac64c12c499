"""Every use Helm makes of asyncpg's private API, checked against one asyncpg version.

A read fetches at most ``FETCH_ROWS`` rows: memory stays bounded and the row limit is seen
without reading the rest of a large result. asyncpg's public way to bound a fetch is a cursor,
which costs one more round trip after the rows (to close its portal, which Helm's ROLLBACK ends
anyway). ``PreparedStatement.fetchrow`` and ``fetchval`` bound their fetch in the same single
Bind/Execute/Sync through a private method, with a limit of 1; Helm calls it with its own limit.

asyncpg reads a statement's rows whole before it hands them over; ``WireCap`` stands between the
connection's transport and asyncpg's protocol (``Connection._transport``, ``._protocol``) and
counts what the server sends while it is armed: past its cap, it stops passing bytes on and
aborts the connection, so a server that sends 1 GiB of rows costs Helm a few MiB.

``WireCap.pipeline`` lets one read end in the same flush as its query, under the same Sync:
the next write asyncpg makes (``PreparedStatement.__bind_execute`` writes its Bind/Execute/Sync in
one ``transport.write``) gets Helm's own Bind/Execute messages inserted before its Sync. The
server's answers to them, after the message that ends asyncpg's Execute and before the
ReadyForQuery, are read by Helm (``_Tail``) and never reach asyncpg, except the messages asyncpg
reads in any state (ParameterStatus, notices, notifications), which are passed on. When the
statement fails, the server skips Helm's messages up to the Sync, and says so by sending none.

tests/unit/kinds/test_db_private_api.py fails as soon as the installed asyncpg is not
``CHECKED_VERSION``. Then re-read ``PreparedStatement.__bind_execute`` in the new version, and
update it.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CHECKED_VERSION = "0.32.0"


async def fetch_at_most(stmt: Any, args: Sequence[Any], limit: int, seconds: float) -> list[Any]:
    """``stmt.fetch(*args, timeout=seconds)``, stopped after ``limit`` rows (the rest stay in
    the open portal)."""
    rows: list[Any] = await stmt._PreparedStatement__bind_execute(tuple(args), limit, seconds)
    return rows


SYNC = b"S\0\0\0\4"


def bind_execute_message(statement: str) -> bytes:
    """Bind (no parameters, results in text) and Execute of a prepared statement, unnamed portal."""
    bind = b"\0" + statement.encode("utf-8") + b"\0" + b"\0\0" * 3
    execute = b"\0" + b"\0" * 4  # no row limit
    return (
        b"B"
        + (len(bind) + 4).to_bytes(4, "big")
        + bind
        + b"E"
        + (len(execute) + 4).to_bytes(4, "big")
        + execute
    )


CLOSE_PORTAL = b"C\0\0\0\6P\0"
"""Close of the unnamed portal: a finished portal keeps its snapshot until it is closed."""


@dataclass(frozen=True)
class TailAnswer:
    """How the server answered Helm's messages after a read's statement."""

    ran: bool
    """The server ran them (it skips them when the statement failed)."""
    failed: bool
    """One of them failed (an ErrorResponse)."""
    status: bytes
    """The transaction status of the ReadyForQuery: ``I`` idle, ``T`` in a transaction, ``E`` failed."""


_length = struct.Struct("!I").unpack_from
_PASSED_ON = frozenset(b"SAN")  # ParameterStatus, NotificationResponse, NoticeResponse
_EXECUTE_ENDS = frozenset(b"CsIE")  # CommandComplete, PortalSuspended, EmptyQueryResponse, Error


class _Tail:
    """Splits the server's stream after a pipelined read: asyncpg's messages up to the one that
    ends its Execute, then Helm's (kept back), then the ReadyForQuery (asyncpg's again)."""

    def __init__(self, future: asyncio.Future[TailAnswer]) -> None:
        self.future = future
        self._ours = False  # past asyncpg's Execute
        self._skip = 0  # bytes of asyncpg's current message still to come
        self._carry = b""  # the start of a message not whole yet
        self._ran = self._failed = False

    def feed(self, data: bytes) -> list[bytes]:
        """The bytes for asyncpg in ``data``, in order (the rest is held or read by Helm)."""
        data = self._carry + data
        self._carry = b""
        if self._ours:
            return self._helms(data)
        pos = self._skip
        if pos >= len(data):
            self._skip = pos - len(data)
            return [data]
        self._skip = 0
        while len(data) - pos >= 5:
            end = pos + 1 + _length(data, pos + 1)[0]
            if data[pos] in _EXECUTE_ENDS:
                if end > len(data):
                    break  # held until whole
                self._ours = True
                return [data[:end], *self._helms(data[end:])]
            if end > len(data):
                self._skip = end - len(data)
                return [data]
            pos = end
        self._carry = data[pos:]
        return [data[:pos]]

    def _helms(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        pos = 0
        while len(data) - pos >= 5:
            end = pos + 1 + _length(data, pos + 1)[0]
            if end > len(data):
                break
            kind = data[pos]
            if kind in _PASSED_ON:
                out.append(data[pos:end])
            elif kind == 0x5A:  # ReadyForQuery: asyncpg's, and the end of Helm's answer
                if not self.future.done():
                    self.future.set_result(TailAnswer(self._ran, self._failed, data[pos + 5 : pos + 6]))
                out.append(data[pos:])
                return out
            else:
                self._ran = True
                self._failed = self._failed or kind == 0x45
            pos = end
        self._carry = data[pos:]
        return out

    def lost(self, exc: Exception | None) -> None:
        if not self.future.done():
            self.future.set_exception(ConnectionError("the connection closed before Helm's answer"))
            self.future.exception()  # retrieved: nobody may be waiting any more


class WireCap(asyncio.Protocol):
    """Counts the bytes the server sends to one connection while armed; past ``limit`` it
    aborts the connection (asyncpg then raises a lost-connection error) and sets ``over``.
    Also carries the pipelined message of a read (``pipeline``)."""

    def __init__(self, conn: Any) -> None:
        self._inner = conn._protocol
        self._transport = conn._transport
        self._left: int | None = None
        self.over = False
        self._tail: _Tail | None = None
        self._suffix: bytes | None = None
        self._sent = False
        self._transport.set_protocol(self)

    def pipeline(self, messages: bytes) -> asyncio.Future[TailAnswer]:
        """Send ``messages`` inside the next Bind/Execute/Sync asyncpg writes, before its Sync;
        the future holds the server's answer to them. ``unpipeline`` afterwards, whatever
        happened."""
        future: asyncio.Future[TailAnswer] = asyncio.get_running_loop().create_future()
        self._tail = _Tail(future)
        self._suffix = messages
        self._transport.write = self._write_with_suffix  # asyncpg writes through the transport
        return future

    def unpipeline(self) -> bool:
        """Stop adding the messages; whether they were sent (if not, nothing is split either)."""
        sent, self._sent = self._sent, False
        if self._suffix is not None:
            del self._transport.write  # the transport's own method again
            self._suffix, self._tail = None, None
        return sent

    def _write_with_suffix(self, data: Any) -> None:
        suffix, self._suffix = self._suffix, None
        del self._transport.write
        data = bytes(data)
        if suffix is None or not data.endswith(SYNC):
            self._tail = None  # not the write Helm expected: sent as asyncpg made it
            self._transport.write(data)
            return
        self._sent = True
        self._transport.write(data[: -len(SYNC)] + suffix + SYNC)

    def arm(self, limit: int) -> None:
        self._left = limit

    def disarm(self) -> None:
        self._left = None

    def data_received(self, data: bytes) -> None:
        if self._left is not None:
            self._left -= len(data)
            if self._left < 0:
                self.over = True
                self._left = None
                self._transport.abort()
                return
        if self._tail is None:
            self._inner.data_received(data)
            return
        chunks = self._tail.feed(data)
        if self._tail.future.done():
            self._tail = None
        for chunk in chunks:
            if chunk:
                self._inner.data_received(chunk)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._tail is not None:
            self._tail.lost(exc)
            self._tail = None
        self._inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        eof = getattr(self._inner, "eof_received", None)
        return eof() if eof is not None else None

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()
