"""The MCP servers the user added, as live sessions: one per (workspace, server), shared.

The ``mcp`` kind calls tools through these sessions and MCP Apps list and read their
resources through the same ones (``broker.mcp.discovery``): the same profile, token, child
environment and limits. The broker holds one ``McpServers`` (``Broker.mcp_servers``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp import types

from broker.credentials import CredentialStore
from broker.errors import CallError, CredentialStoreError, ErrorCode, ProfileError
from broker.mcp.httpcap import HttpState
from broker.mcp.pool import SessionPool, http_opener, stdio_opener, working_folder
from broker.mcp.profiles import MCP_SERVERS, HttpProfile, Profile, safe_environment
from broker.mcp.session import McpLimits, ServerSession
from broker.settings import Home, Settings, Workspace

if TYPE_CHECKING:
    from broker.policy import PolicyState

DEFAULT_LIMITS = McpLimits()


class McpServers:
    """Holds one session per (workspace, server)."""

    def __init__(self, home: Home, credentials: CredentialStore, limits: McpLimits | None = None) -> None:
        self.profiles = MCP_SERVERS.store(home, credentials)
        self.limits = limits or DEFAULT_LIMITS
        self._pool = SessionPool()
        self._http_state: dict[tuple[str, str], HttpState] = {}

    def profile(
        self, name: str, settings: Settings | None = None, policy: PolicyState | None = None
    ) -> tuple[Profile, str | None]:
        """The server's profile and its token (``not_configured`` when either is missing); read
        from ``settings`` and checked against ``policy`` when given (a call's), else as they
        are now."""
        try:
            profile = self.profiles.get(name, settings)
        except ProfileError as exc:
            raise CallError(
                ErrorCode.NOT_CONFIGURED, f"the MCP server profile {name!r} is invalid; add it again"
            ) from exc
        if profile is None:
            raise CallError(ErrorCode.NOT_CONFIGURED, f"no MCP server named {name!r} is configured in Helm")
        # The organisation's policy: never started nor reached.
        refusal = self.profiles.refusal(profile, policy)
        if refusal is not None:
            raise CallError(ErrorCode.REFUSED, refusal)
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
        self,
        workspace: Workspace,
        server: str,
        settings: Settings | None = None,
        policy: PolicyState | None = None,
    ) -> ServerSession:
        """The running session with ``server`` (its profile read from ``settings`` and checked
        against ``policy`` when given: ``profile``)."""
        profile, token = self.profile(server, settings, policy)
        key = (workspace.name, server)
        fingerprint = (profile, token, str(workspace.root))  # a frozen profile compares by value
        running = self._pool.running(key, fingerprint)
        if running is not None:  # every call after the first: nothing to build
            return running
        label = f"MCP server {server!r}"
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
                given = () if token_env is None or token is None else (token,)
                opener = stdio_opener(command, env, working_folder(workspace), self.limits, given)
                return ServerSession(label, opener, self.limits, secrets=given)

        return await self._pool.get(key, fingerprint, make)

    def unavailable_reason(self, workspace: Workspace, server: str, err: CallError) -> CallError:
        """``err``, or the clearer reason when the server refused Helm's token."""
        state = self._http_state.get((workspace.name, server))
        if err.code is ErrorCode.UNAVAILABLE and state is not None and state.auth_refused:
            return CallError(
                ErrorCode.UNAVAILABLE,
                f"MCP server {server!r} refused Helm's token; update it with helm mcp add",
            )
        return err

    async def list_tools(self, workspace: Workspace, server: str) -> list[types.Tool]:
        """The server's tools, by name."""
        session = await self.session(workspace, server)
        try:
            tools = await session.tools()
        except CallError as err:
            raise self.unavailable_reason(workspace, server, err) from None
        return [tools[name] for name in sorted(tools)]

    async def aclose(self) -> None:
        await self._pool.aclose()
