"""The ``mcp`` kind: tool calls to an MCP server the user configured in Helm."""

from __future__ import annotations

import json
from collections.abc import Mapping

from mcp import types

from broker.envelope import PLAIN
from broker.errors import CallError, CredentialStoreError, ErrorCode, ProfileError
from broker.kinds.base import JSON, Call, KindEnv, WriteDetails
from broker.kinds.mcp import MCP, pins
from broker.kinds.mcp.httpcap import HttpState
from broker.kinds.mcp.pool import SessionPool, http_opener, stdio_opener, working_folder
from broker.kinds.mcp.profiles import MCP_SERVERS, HttpProfile, Profile, safe_environment
from broker.kinds.mcp.results import check_size, tool_data
from broker.kinds.mcp.rules import McpConnection
from broker.kinds.mcp.session import McpLimits, ServerSession
from broker.redact import scrubbed
from broker.settings import Settings, Workspace

DEFAULT_LIMITS = McpLimits()


def wire_args(args: Mapping[str, JSON]) -> str:
    """The arguments exactly as Helm sends them (compact JSON, the caller's key order)."""
    return json.dumps(dict(args), ensure_ascii=False, separators=(",", ":"))


class McpKind:
    """One per broker; holds one session per (workspace, server)."""

    def __init__(self, env: KindEnv, limits: McpLimits | None = None) -> None:
        self.env = env
        self.profiles = MCP_SERVERS.store(env.home, env.credentials)
        self.limits = limits or DEFAULT_LIMITS
        self._pool = SessionPool()
        self._http_state: dict[tuple[str, str], HttpState] = {}

    # -- profiles and sessions -----------------------------------------------------------
    def _profile(self, name: str, settings: Settings | None = None) -> tuple[Profile, str | None]:
        try:
            profile = self.profiles.get(name, settings)
        except ProfileError as exc:
            raise CallError(
                ErrorCode.NOT_CONFIGURED, f"the MCP server profile {name!r} is invalid; add it again"
            ) from exc
        if profile is None:
            raise CallError(ErrorCode.NOT_CONFIGURED, f"no MCP server named {name!r} is configured in Helm")
        if not profile.wants_token:
            return profile, None
        try:
            token = self.profiles.secret(name, "token")
        except CredentialStoreError as exc:
            raise CallError(ErrorCode.NOT_CONFIGURED, "Helm's credential store cannot be read") from exc
        if not token:
            raise CallError(
                ErrorCode.NOT_CONFIGURED, f"MCP server {name!r} has no stored token; add it again"
            )
        return profile, token

    async def session(
        self, workspace: Workspace, server: str, settings: Settings | None = None
    ) -> ServerSession:
        """The running session with ``server`` (its profile read from ``settings`` when given)."""
        profile, token = self._profile(server, settings)
        label = f"MCP server {server!r}"
        key = (workspace.name, server)
        if isinstance(profile, HttpProfile):
            state = self._http_state.setdefault(key, HttpState())

            def make() -> ServerSession:
                state.auth_refused = False
                opener = http_opener(profile.url, token, self.limits, state)
                sent = () if token is None else (f"Bearer {token}", token)
                return ServerSession(label, opener, self.limits, secrets=sent)

        else:
            command, token_env, passed = profile.command, profile.token_env, profile.pass_env

            def make() -> ServerSession:
                env = safe_environment(passed=passed)
                if token_env is not None and token is not None:
                    env[token_env] = token
                opener = stdio_opener(command, env, working_folder(workspace), self.limits)
                given = () if token_env is None or token is None else (token,)
                return ServerSession(label, opener, self.limits, secrets=given)

        fingerprint = (profile, token, str(workspace.root))  # a frozen profile compares by value
        return await self._pool.get(key, fingerprint, make)

    def _unavailable_reason(self, workspace: Workspace, server: str, err: CallError) -> CallError:
        state = self._http_state.get((workspace.name, server))
        if err.code is ErrorCode.UNAVAILABLE and state is not None and state.auth_refused:
            return CallError(
                ErrorCode.UNAVAILABLE,
                f"MCP server {server!r} refused Helm's token; update it with helm mcp add",
            )
        return err

    async def list_tools(self, workspace: Workspace, server: str) -> list[types.Tool]:
        """The server's tools (for ``helm mcp tools`` and the Settings Test button)."""
        session = await self.session(workspace, server)
        try:
            tools = await session.tools()
        except CallError as err:
            raise self._unavailable_reason(workspace, server, err) from None
        return [tools[name] for name in sorted(tools)]

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
        session = await self.session(call.workspace, server, call.settings)
        try:
            tools = await session.tools()
        except CallError as err:
            raise self._unavailable_reason(call.workspace, server, err) from None
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
        self._profile(server, call.settings)  # not_configured before a dialog appears
        await self._checked(call)
        return MCP.confirm.details(
            fields=(("MCP server", server), ("Tool", call.operation), ("Arguments", wire_args(call.args))),
            request=f"{call.operation} {wire_args(call.args)}",
            binding={"server": server, "tool": call.operation, "args": dict(call.args)},
        )

    async def execute(self, call: Call[McpConnection]) -> dict[str, JSON]:
        session = await self._checked(call)
        return await scrubbed(self.env, call, session.secrets, self._call_tool(call, session))

    async def _call_tool(self, call: Call[McpConnection], session: ServerSession) -> dict[str, JSON]:
        server = _server(call.connection)
        try:
            result = await session.call_tool(call.operation, dict(call.args))
        except CallError as err:
            raise self._unavailable_reason(call.workspace, server, err) from None
        data = tool_data(result)
        check_size(data, self.limits.max_bytes, session.label)
        if result.isError:
            raise CallError(ErrorCode.TOOL_ERROR, f"tool {call.operation!r} reported an error", data=data)
        return PLAIN.success(data, None)

    async def aclose(self) -> None:
        await self._pool.aclose()


def _server(conn: McpConnection) -> str:
    assert conn.server is not None  # the schema requires it for mcp connections
    return conn.server
