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

tests/unit/kinds/test_db_private_api.py fails as soon as the installed asyncpg is not
``CHECKED_VERSION``. Then re-read ``PreparedStatement.__bind_execute`` in the new version, and
update it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

CHECKED_VERSION = "0.32.0"


async def fetch_at_most(stmt: Any, args: Sequence[Any], limit: int, seconds: float) -> list[Any]:
    """``stmt.fetch(*args, timeout=seconds)``, stopped after ``limit`` rows (the rest stay in
    the open portal)."""
    rows: list[Any] = await stmt._PreparedStatement__bind_execute(tuple(args), limit, seconds)
    return rows


class WireCap(asyncio.Protocol):
    """Counts the bytes the server sends to one connection while armed; past ``limit`` it
    aborts the connection (asyncpg then raises a lost-connection error) and sets ``over``."""

    def __init__(self, conn: Any) -> None:
        self._inner = conn._protocol
        self._transport = conn._transport
        self._left: int | None = None
        self.over = False
        self._transport.set_protocol(self)

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
        self._inner.data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        eof = getattr(self._inner, "eof_received", None)
        return eof() if eof is not None else None

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()
