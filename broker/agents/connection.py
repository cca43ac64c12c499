"""One running agent and the SDK's connection to it: start-up, sessions, prompts, stop.

A connection hosts one session at a time; when that session closes, the host may keep the
connection warm for the next session of the same profile and folder. Helm never passes MCP
servers to the agent (``mcp_servers`` is always empty): an MCP server the agent talked to
directly would bypass Helm's broker, its allowlists and its confirmations.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import acp
from acp import RequestError, schema

from broker.agents.client import CLIENT_CAPABILITIES, HelmClient
from broker.agents.flow import Flow
from broker.agents.process import AgentProcess, LineTransport
from broker.agents.profiles import AgentProfile
from broker.agents.state import Limits
from broker.childenv import child_environment
from broker.errors import AgentError

CLIENT_INFO = schema.Implementation(name="helm", title="Helm", version="1")


@dataclass(frozen=True)
class ConnectionKey:
    """What a warm connection may be reused for: the same agent, as configured, in the same
    folder (a changed command or key starts a new agent)."""

    profile: str
    workspace: str
    project: str | None
    fingerprint: str


class AgentConnection:
    def __init__(
        self, key: ConnectionKey, agent: AgentProcess, cwd: Path, limits: Limits, flow: Flow
    ) -> None:
        self.key = key
        self.agent = agent
        self.cwd = cwd
        self.limits = limits
        self.flow = flow
        self.client = HelmClient(self.flow)
        self.transport = LineTransport(agent, self.flow)
        # HelmClient's refusing methods take any arguments, so it is not the Client protocol to
        # the letter; the SDK's router calls every handler with keyword arguments only.
        self.conn = acp.connect_to_agent(cast(acp.Client, self.client), self.transport)
        self.can_load = False

    @classmethod
    async def spawn(
        cls,
        key: ConnectionKey,
        profile: AgentProfile,
        secret: str | None,
        cwd: Path,
        limits: Limits,
        flow: Flow,
    ) -> AgentConnection:
        """Start the agent's process (no shell, its own process group, the minimal environment)."""
        env = child_environment(profile.key_env, secret)
        agent = await AgentProcess.start(profile.command, env, cwd, secret)
        return cls(key, agent, cwd, limits, flow)

    async def initialize(self) -> None:
        """ACP ``initialize``: Helm's capabilities (files, no terminal); the agent's answer."""
        init = await self.call(self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=CLIENT_CAPABILITIES,
            client_info=CLIENT_INFO,
        ), "initialize")  # fmt: skip
        caps = init.agent_capabilities
        self.can_load = bool(caps and caps.load_session)

    @property
    def alive(self) -> bool:
        return self.agent.process.returncode is None and self.transport.broken is None

    async def call[T](self, request: Awaitable[T], what: str) -> T:
        """Await one request to the agent, translating a dead agent or an error reply."""
        try:
            return await request
        except RequestError as exc:
            raise AgentError(f"the agent refused {what}: {self.agent.scrub(clip_message(exc))}") from None
        except ConnectionError:
            raise await self.died(f"the agent stopped during {what}") from None

    async def died(self, message: str) -> AgentError:
        """The error for an agent that went away (its exit code and stderr tail, if it exited)."""
        if self.transport.broken is not None:
            message = self.transport.broken
            await self.agent.terminate(self.limits.term_grace)
        else:
            await self.agent.wait_exit(self.limits.term_grace)
        return self.agent.failure(message)

    async def new_session(self) -> str:
        response = await self.call(self.conn.new_session(cwd=str(self.cwd), mcp_servers=[]), "session/new")
        return response.session_id

    async def load_session(self, session_id: str) -> None:
        await self.call(
            self.conn.load_session(cwd=str(self.cwd), session_id=session_id, mcp_servers=[]), "session/load"
        )

    async def prompt(self, session_id: str, text: str) -> str:
        """One prompt turn; returns ACP's stop reason."""
        prompt: list[Any] = [schema.TextContentBlock(type="text", text=text)]
        response = await self.call(self.conn.prompt(session_id=session_id, prompt=prompt), "the turn")
        return response.stop_reason

    async def cancel(self, session_id: str) -> None:
        """Send session/cancel (a notification: no answer to wait for)."""
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await asyncio.wait_for(self.conn.cancel(session_id=session_id), self.limits.cancel_grace)

    async def close(self) -> None:
        """Stop the agent and everything in its process group."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.conn.close(), self.limits.term_grace)
        await self.agent.close(self.limits.term_grace)


def clip_message(exc: RequestError) -> str:
    text = str(exc)
    data = exc.data
    if isinstance(data, dict) and isinstance(data.get("details"), str):
        text += f": {data['details']}"
    return text[:1000]
