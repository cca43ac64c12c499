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

``WireCap.pipeline`` lets one read end in the same flush as its query: the next write asyncpg
makes (``PreparedStatement.__bind_execute`` writes its Bind/Execute/Sync in one
``transport.write``) carries Helm's own message after its Sync, and the server's answers to that
message, after the ReadyForQuery that ends asyncpg's part, are read by Helm (``_Tail``) and never
reach asyncpg, except the messages asyncpg reads in any state (ParameterStatus, notices,
notifications), which are passed on.

tests/unit/kinds/test_db_private_api.py fails as soon as the installed asyncpg is not
``CHECKED_VERSION``. Then re-read ``PreparedStatement.__bind_execute`` in the new version, and
update it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CHECKED_VERSION = "0.32.0"


async def fetch_at_most(stmt: Any, args: Sequence[Any], limit: int, seconds: float) -> list[Any]:
    """``stmt.fetch(*args, timeout=seconds)``, stopped after ``limit`` rows (the rest stay in
    the open portal)."""
    rows: list[Any] = await stmt._PreparedStatement__bind_execute(tuple(args), limit, seconds)
    return rows


def query_message(sql: str) -> bytes:
    """A simple-protocol Query message."""
    body = sql.encode("utf-8") + b"\0"
    return b"Q" + (len(body) + 4).to_bytes(4, "big") + body


@dataclass(frozen=True)
class TailAnswer:
    """How the server answered Helm's message after a read."""

    failed: bool
    """It sent an ErrorResponse."""
    status: bytes
    """The transaction status of its ReadyForQuery: ``I`` idle, ``T`` in a transaction, ``E`` failed."""


_PASSED_ON = frozenset(b"SAN")  # ParameterStatus, NotificationResponse, NoticeResponse


class _Tail:
    """Splits the server's stream after a pipelined read: everything up to and including the
    first ReadyForQuery is asyncpg's; the messages after it, up to the next ReadyForQuery, answer
    Helm's message."""

    def __init__(self, future: asyncio.Future[TailAnswer]) -> None:
        self.future = future
        self.asyncpg_done = False
        self._skip = 0  # bytes of asyncpg's current message still to come
        self._carry = b""  # the start of a message whose header is not whole yet
        self._failed = False

    def feed(self, data: bytes) -> tuple[bytes, list[bytes], bytes]:
        """(bytes for asyncpg now, messages for asyncpg after them, bytes past Helm's answer)."""
        data = self._carry + data
        self._carry = b""
        if not self.asyncpg_done:
            end = self._asyncpg_part(data)
            if not self.asyncpg_done:
                return data[:end], [], b""
            head, data = data[:end], data[end:]
        else:
            head = b""
        passed: list[bytes] = []
        pos = 0
        while len(data) - pos >= 5:
            size = int.from_bytes(data[pos + 1 : pos + 5], "big")
            if len(data) - pos < 1 + size:
                break
            kind = data[pos]
            if kind in _PASSED_ON:
                passed.append(data[pos : pos + 1 + size])
            elif kind == 0x45:  # ErrorResponse
                self._failed = True
            elif kind == 0x5A:  # ReadyForQuery: Helm's answer is whole
                if not self.future.done():
                    self.future.set_result(TailAnswer(self._failed, data[pos + 5 : pos + 6]))
                return head, passed, data[pos + 1 + size :]
            pos += 1 + size
        self._carry = data[pos:]
        return head, passed, b""

    def _asyncpg_part(self, data: bytes) -> int:
        """Where asyncpg's part of ``data`` ends (its ReadyForQuery seen: ``asyncpg_done``)."""
        pos = self._skip
        if pos > len(data):
            self._skip = pos - len(data)
            return len(data)
        self._skip = 0
        while True:
            if len(data) - pos < 6:  # a header, and the status byte of a ReadyForQuery
                self._carry = data[pos:]
                return pos
            end = pos + 1 + int.from_bytes(data[pos + 1 : pos + 5], "big")
            if data[pos] == 0x5A:
                self.asyncpg_done = True
                return end
            if end > len(data):
                self._skip = end - len(data)
                return len(data)
            pos = end

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
        self._transport.set_protocol(self)

    def pipeline(self, message: bytes) -> asyncio.Future[TailAnswer]:
        """Send ``message`` right after the next Bind/Execute/Sync asyncpg writes; the future
        holds the server's answer to it. ``unpipeline`` afterwards, whatever happened."""
        future: asyncio.Future[TailAnswer] = asyncio.get_running_loop().create_future()
        self._tail = _Tail(future)
        self._suffix = message
        self._transport.write = self._write_with_suffix  # asyncpg writes through the transport
        return future

    def unpipeline(self) -> bool:
        """Stop adding the message; whether it was sent (if not, nothing is split either)."""
        if self._suffix is None:
            return True
        del self._transport.write  # the transport's own method again
        self._suffix, self._tail = None, None
        return False

    def _write_with_suffix(self, data: Any) -> None:
        suffix, self._suffix = self._suffix, None
        del self._transport.write
        self._transport.write(bytes(data) + (suffix or b""))

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
        head, passed, rest = self._tail.feed(data)
        if self._tail.future.done():
            self._tail = None
        if head:
            self._inner.data_received(head)
        for message in passed:
            self._inner.data_received(message)
        if rest:
            self._inner.data_received(rest)

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
