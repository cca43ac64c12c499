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
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

TOOLS = Path(sys.argv[1])


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    raw = json.loads(TOOLS.read_text(encoding="utf-8"))
    return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in raw])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    text = json.dumps({"tool": params.name, "arguments": params.arguments or {}})
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server("from-file", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
