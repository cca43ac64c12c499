"""A stdio MCP server whose tool definitions come from a file, read at every tools/list.

Run: ``python tests/servers/mcp_from_file.py TOOLS.json`` where the file holds a JSON list of
``{"name", "description", "inputSchema"}``. A test changes a tool (as a server update would)
by rewriting the file: the next listing, in this process or a new one, shows the change. Every
tool answers with the arguments it received, as text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = Path(sys.argv[1])
server: Server[Any, Any] = Server("from-file")


@server.list_tools()  # type: ignore[misc, no-untyped-call]
async def list_tools() -> list[types.Tool]:
    return [types.Tool(**raw) for raw in json.loads(TOOLS.read_text(encoding="utf-8"))]


@server.call_tool()  # type: ignore[misc]
async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=json.dumps({"tool": name, "arguments": arguments}))]


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
