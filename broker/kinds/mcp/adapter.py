"""The ``mcp`` kind: tool calls to an MCP server the user configured in Helm."""

from __future__ import annotations

import json
from collections.abc import Mapping

from mcp import types

from broker.envelope import PLAIN
from broker.errors import CallError, ErrorCode
from broker.kinds.base import JSON, Call, KindEnv, WriteDetails
from broker.kinds.mcp import MCP
from broker.kinds.mcp.rules import McpConnection
from broker.mcp import pins
from broker.mcp.results import check_size, tool_data
from broker.mcp.servers import McpServers
from broker.mcp.session import McpLimits, ServerSession
from broker.policy import PolicyState
from broker.redact import scrubbed
from broker.settings import Settings, Workspace


def wire_args(args: Mapping[str, JSON]) -> str:
    """The arguments exactly as Helm sends them (compact JSON, the caller's key order)."""
    return json.dumps(dict(args), ensure_ascii=False, separators=(",", ":"))


class McpKind:
    """One per broker; calls tools through the broker's shared MCP sessions (``broker.mcp.servers``)."""

    def __init__(self, env: KindEnv, limits: McpLimits | None = None) -> None:
        """``limits``: this kind's own sessions with these limits instead of the broker's."""
        self.env = env
        self._owns_servers = limits is not None or env.mcp_servers is None
        if env.mcp_servers is not None and limits is None:
            self.servers = env.mcp_servers()
        else:
            self.servers = McpServers(env.home, env.credentials, limits)
        self.profiles = self.servers.profiles
        self.limits = self.servers.limits

    async def session(
        self,
        workspace: Workspace,
        server: str,
        settings: Settings | None = None,
        policy: PolicyState | None = None,
    ) -> ServerSession:
        """The running session with ``server`` (its profile read from ``settings`` and checked
        against ``policy`` when given)."""
        return await self.servers.session(workspace, server, settings, policy)

    async def list_tools(self, workspace: Workspace, server: str) -> list[types.Tool]:
        """The server's tools (for ``helm mcp tools`` and the Settings Test button)."""
        return await self.servers.list_tools(workspace, server)

    # -- the Kind protocol ---------------------------------------------------------------
    async def pin(self, workspace: Workspace, conn: McpConnection) -> Mapping[str, JSON]:
        """Pin the declared tools as the server defines them now. Raises ``CallError``
        (``not_configured``, ``unavailable``) when the server is not set up or does not answer:
        review then leaves them to be pinned at the first call (trust on first use)."""
        listed = await self.list_tools(workspace, _server(conn))
        return pins.pin_tools(conn.operations, {t.name: t for t in listed})

    async def pin_changes(
        self, workspace: Workspace, conn: McpConnection, pinned: Mapping[str, JSON]
    ) -> list[str]:
        """What changed in the declared tools since approval (for review)."""
        return pins.changes(pinned, await self.pin(workspace, conn))

    async def _checked(self, call: Call[McpConnection]) -> ServerSession:
        server = _server(call.connection)
        session = await self.session(call.workspace, server, call.settings, call.policy)
        try:
            tools = await session.tools()
        except CallError as err:
            raise self.servers.unavailable_reason(call.workspace, server, err) from None
        if not pins.matches(call.approval, call.operation, session.tool_digest(tools, call.operation)):
            what = "is no longer offered" if call.operation not in tools else "changed since you approved it"
            raise CallError(
                ErrorCode.REFUSED,
                f"tool {call.operation!r} of MCP server {server!r} {what}; "
                "approve the extension again (review shows what changed)",
            )
        return session

    async def describe(self, call: Call[McpConnection]) -> WriteDetails:
        server = _server(call.connection)
        self.servers.profile(server, call.settings, call.policy)  # not_configured before a dialog appears
        await self._checked(call)
        return MCP.confirm.details(
            fields=(("MCP server", server), ("Tool", call.operation), ("Arguments", wire_args(call.args))),
            request=f"{call.operation} {wire_args(call.args)}",
            binding={"server": server, "tool": call.operation, "args": dict(call.args)},
        )

    async def execute(self, call: Call[McpConnection]) -> dict[str, JSON]:
        session = await self._checked(call)
        if not session.secrets:  # Helm sent this server no secret (most stdio servers): none to scrub
            return await self._call_tool(call, session)
        return await scrubbed(self.env, call, session.secrets, self._call_tool(call, session))

    async def _call_tool(self, call: Call[McpConnection], session: ServerSession) -> dict[str, JSON]:
        server = _server(call.connection)
        try:
            result = await session.call_tool(call.operation, dict(call.args))
        except CallError as err:
            raise self.servers.unavailable_reason(call.workspace, server, err) from None
        data = tool_data(result)
        check_size(data, self.limits.max_bytes, session.label)
        if result.is_error:
            raise CallError(ErrorCode.TOOL_ERROR, f"tool {call.operation!r} reported an error", data=data)
        return PLAIN.success(data, None)

    async def aclose(self) -> None:
        if self._owns_servers:
            await self.servers.aclose()


def _server(conn: McpConnection) -> str:
    assert conn.server is not None  # the schema requires it for mcp connections
    return conn.server
