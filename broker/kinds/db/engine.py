"""What every database engine adapter offers, and the pieces they share.

An ``Engine`` runs one statement for one profile: ``read`` in a read-only transaction (or a
read-only SQLite connection), ``write`` read-write for that call only. It owns its connections
(a small pool per profile) and raises ``CallError`` with the contract's codes; messages that come
from the database pass through ``scrub`` so they never carry the host, path or password.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from broker.errors import CallError, ErrorCode
from broker.kinds.db.values import Scalar
from broker.netcause import cause

QUERY_SECONDS = 5.0
CONNECT_SECONDS = 5.0
MAX_MESSAGE = 600
MAX_IDLE = 4
MAX_OPEN = 8


@dataclass(frozen=True)
class Written:
    rows_affected: int

    def result(self) -> dict[str, Any]:
        return {"rowsAffected": self.rows_affected}


class Engine(Protocol):
    async def read(self, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        """``{columns, rows}`` of one read-only statement."""
        ...

    async def write(self, sql: str, args: Sequence[Scalar]) -> Written: ...

    async def role_warnings(self) -> list[str]:
        """What the profile's account may do beyond reading, in words for the user."""
        ...

    async def aclose(self) -> None: ...


def scrub(message: str, secrets: Sequence[str | None]) -> str:
    """A database's message, made safe to show an extension: no secret, bounded, one paragraph."""
    text = " ".join(message.split())
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = re.sub(re.escape(secret), "…", text, flags=re.IGNORECASE)
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 1] + "…"
    return text or "the database reported an error without a message"


def query_failed(message: str, secrets: Sequence[str | None]) -> CallError:
    return CallError(ErrorCode.QUERY_FAILED, scrub(message, secrets))


def timeout_error() -> CallError:
    return CallError(
        ErrorCode.TIMEOUT,
        f"the query ran longer than {QUERY_SECONDS:.0f} s and was cancelled on the server",
    )


def unavailable(what: str = "the database is unavailable") -> CallError:
    return CallError(ErrorCode.UNAVAILABLE, f"{what}; try again later")


def unreachable(exc: BaseException) -> CallError:
    """The server could not be reached, and why (refused, DNS, TLS, timeout…; never its address)."""
    return unavailable(f"Helm cannot reach the database server: {cause(exc)}")


class Pool[C]:
    """A few idle connections per profile, never shared between calls.

    ``open`` makes a connection and ``close`` ends one. ``take``/``give``/``discard`` are called
    by the engine around each call. An engine gives a connection back only once it has left
    the session clean for the next call (each engine does that within the call, so a reset
    costs no round trip of its own); a connection that saw any doubt (a timeout, a lost link,
    a cut result) is discarded instead. Idle connections older than ``max_idle`` seconds are
    closed rather than handed out (the server may already have ended them).
    """

    def __init__(
        self,
        open_: Callable[[], Awaitable[C]],
        close: Callable[[C], Awaitable[None]],
        *,
        max_idle: float = math.inf,
    ) -> None:
        self._open = open_
        self._close = close
        self._max_idle = max_idle
        self._idle: list[tuple[C, float]] = []
        self._slots = asyncio.Semaphore(MAX_OPEN)
        self._closed = False

    async def take(self) -> tuple[C, bool]:
        """A connection and whether it is fresh (never used before)."""
        if self._closed:
            raise unavailable("this database connection is closing")
        await self._slots.acquire()
        try:
            while self._idle:
                conn, since = self._idle.pop()
                if time.monotonic() - since <= self._max_idle:
                    return conn, False
                await self._quiet_close(conn)
            return await self._open(), True
        except BaseException:
            self._slots.release()
            raise

    async def give(self, conn: C) -> None:
        """Keep ``conn``, clean again, for the next call."""
        self._slots.release()
        if self._closed or len(self._idle) >= MAX_IDLE:
            await self._quiet_close(conn)
        else:
            self._idle.append((conn, time.monotonic()))

    async def discard(self, conn: C) -> None:
        self._slots.release()
        await self._quiet_close(conn)

    async def _quiet_close(self, conn: C) -> None:
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                await self._close(conn)
        except Exception:  # noqa: BLE001 - a connection that fails to close leaves nothing to do
            return

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn, _since in idle:
            await self._quiet_close(conn)
