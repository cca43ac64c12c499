"""Helm says in ``initialize`` that it renders MCP Apps, so a server that offers its UI only to
hosts that say so (tests/servers/mcp_apps_gated.py) offers it to Helm."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from broker.mcp import discovery, profiles
from broker.workspaces import add_workspace
from tests.helpers import new_broker
from tests.support import REPO
from tests.unit.kinds.mcp_setup import add_stdio, mcp_extension

GATED = [sys.executable, str(REPO / "tests" / "servers" / "mcp_apps_gated.py")]
URI = "ui://gated/app"


async def test_a_server_that_offers_its_app_only_to_hosts_that_render_apps_offers_it_to_helm(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_workspace(broker.home, "ws", tmp_path)
        add_stdio(broker, "gated", GATED)
        apps = await discovery.list_apps(broker, "ws", "gated")
        document = await discovery.read_document(broker, "ws", "gated", URI)
    assert [(app.uri, app.name, [tool.name for tool in app.linked]) for app in apps] == [
        (URI, "Gated app", ["show"])
    ]
    assert b"offered only to hosts that render MCP Apps" in document.html


async def test_the_server_hears_the_mcp_apps_extension_with_the_one_ui_type_helm_renders(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "gated", GATED)
        ctx = await mcp_extension(broker, tmp_path, "gated", ["show"])
        result = await broker.call(ctx, "m", "show", {})
    assert result["ok"], result
    heard = json.loads(result["data"][0]["text"])
    assert heard == {
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    }


async def test_a_host_that_does_not_say_it_renders_apps_is_offered_no_app_by_that_server():
    # The control: the same server, asked by a client that advertises nothing, links no UI.
    params = StdioServerParameters(command=GATED[0], args=GATED[1:], env=profiles.safe_environment())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        resources = (await session.list_resources()).resources
    assert [(tool.name, tool.meta) for tool in tools] == [("show", None)]
    assert resources == []
