"""The MCP session pool: one session per (workspace, server) while its fingerprint is unchanged."""

from __future__ import annotations

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
