"""The real ``@zed-industries/claude-code-acp``, provisioned from the npm registry with Helm's
shipped, signed catalogue and started through the agent profile's launcher command, answers ACP
``initialize`` and ``session/new`` with no account.

It needs Node.js, a writable HOME (it keeps ``~/.claude.json`` and ``~/.claude/``) and the
registry; no API key or login is needed until the first prompt.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import httpx
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.schema import ClientCapabilities, FileSystemCapabilities

from app.commands.agent_provision import launcher_argv
from broker.agents import provision
from broker.agents.provision.registry import registry_url
from tests.support import require


class _SilentClient:
    """The client side for a start-up check: no prompt is sent, so nothing is asked."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no permission is asked before a prompt")

    def on_connect(self, conn: Any) -> None:
        pass


def _registry_reachable() -> bool:
    try:
        return httpx.head(registry_url(), timeout=10).status_code < 500
    except httpx.HTTPError:
        return False


async def test_claude_code_acp_provisioned_from_the_registry_starts_a_session(tmp_path: Path) -> None:
    require("node", "Node.js runs the adapter")
    require(_registry_reachable(), "the npm registry is needed to provision the real adapter")
    home, user, workspace = tmp_path / "helm", tmp_path / "user", tmp_path / "workspace"
    user.mkdir()
    workspace.mkdir()

    added = await provision.add(home, "@zed-industries/claude-code-acp")
    assert (await provision.verify(home, "claude-code")).ok
    env = {"PATH": os.environ["PATH"], "HOME": str(user)}
    argv = launcher_argv(home, added.adapter.name)  # verifies the receipt, then becomes node
    async with spawn_agent_process(_SilentClient(), argv[0], *argv[1:], env=env, cwd=workspace) as (conn, _):
        capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True), terminal=False)
        hello = await asyncio.wait_for(conn.initialize(PROTOCOL_VERSION, capabilities), 60)
        session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), 60)

    assert hello.agent_info is not None and hello.agent_info.name == "@zed-industries/claude-code-acp"
    assert hello.agent_info.version == added.adapter.version
    assert session.session_id
