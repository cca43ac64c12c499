"""The MCP session pool: one session per (workspace, server) while its fingerprint is unchanged."""

from __future__ import annotations

import asyncio
from typing import Any

from broker.mcp.pool import SessionPool
from broker.mcp.profiles import StdioProfile
from broker.mcp.session import McpLimits, ServerSession


def _never_opened(_hook: Any) -> Any:
    raise AssertionError("the pool must not start a session")


async def test_a_session_is_kept_while_its_fingerprint_is_equal_and_replaced_when_it_changes() -> None:
    pool, made = SessionPool(), []

    def make() -> ServerSession:
        made.append(ServerSession("s", _never_opened, McpLimits()))
        return made[-1]

    key = ("ws", "srv")
    first = await pool.get(key, (StdioProfile("srv", ("a",), None), None, "/w"), make)
    again = await pool.get(key, (StdioProfile("srv", ("a",), None), None, "/w"), make)  # equal, not the same
    token = await pool.get(key, (StdioProfile("srv", ("a",), None), "t2", "/w"), make)
    command = await pool.get(key, (StdioProfile("srv", ("b",), None), "t2", "/w"), make)
    await pool.aclose()
    assert again is first
    assert len({id(first), id(token), id(command)}) == 3
    assert len(made) == 3


class _SlowToClose(ServerSession):
    """A session whose close waits until the test lets it end."""

    def __init__(self) -> None:
        super().__init__("s", _never_opened, McpLimits())
        self.closing, self.may_close = asyncio.Event(), asyncio.Event()

    async def aclose(self) -> None:
        self.closing.set()
        await self.may_close.wait()
        await super().aclose()


async def test_the_running_session_is_handed_out_without_the_lock_only_while_nothing_replaces_it() -> None:
    pool, old = SessionPool(), _SlowToClose()
    key, fingerprint = ("ws", "srv"), (StdioProfile("srv", ("a",), None), None, "/w")
    assert pool.running(key, fingerprint) is None  # none made yet
    assert await pool.get(key, fingerprint, lambda: old) is old
    assert pool.running(key, (StdioProfile("srv", ("a",), None), None, "/w")) is old  # equal, not the same
    assert pool.running(("ws", "other"), fingerprint) is None
    changed = (StdioProfile("srv", ("b",), None), None, "/w")
    assert pool.running(key, changed) is None  # ``get`` replaces it
    new = ServerSession("s", _never_opened, McpLimits())
    replacing = asyncio.create_task(pool.get(key, changed, lambda: new))
    await old.closing.wait()
    assert pool.running(key, fingerprint) is None  # while the old one closes, callers wait in ``get``
    old.may_close.set()
    assert await replacing is new
    assert pool.running(key, changed) is new
    await pool.aclose()
    assert pool.running(key, changed) is None
