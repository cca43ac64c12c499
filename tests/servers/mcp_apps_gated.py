"""A stdio MCP server that offers its app only to a host that says it renders MCP Apps.

Run: ``python tests/servers/mcp_apps_gated.py``. Built on the SDK's lowlevel ``Server`` and its
``client_supports_apps``, as servers gate their UIs: a host whose ``initialize`` lists the
``io.modelcontextprotocol/ui`` extension with ``text/html;profile=mcp-app`` sees the tool
``show`` linked to ``ui://gated/app`` and that resource; any other host sees a plain ``show``,
no resource and no link. ``show`` answers with the extensions the host advertised.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import MCPError, types
from mcp.server import Server, ServerRequestContext
from mcp.server.apps import APP_MIME_TYPE, client_supports_apps
from mcp.server.stdio import stdio_server

URI = "ui://gated/app"
HTML = "<!doctype html><title>Gated</title><p>offered only to hosts that render MCP Apps</p>"


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    meta = {"ui": {"resourceUri": URI}} if client_supports_apps(ctx) else None
    show = types.Tool(
        name="show",
        description="Shows the gated app (to a host that renders MCP Apps)",
        input_schema={"type": "object"},
        annotations=types.ToolAnnotations(read_only_hint=True),
        _meta=meta,
    )
    return types.ListToolsResult(tools=[show])


async def list_resources(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    found = [types.Resource(uri=URI, name="Gated app", mime_type=APP_MIME_TYPE)]
    return types.ListResourcesResult(resources=found if client_supports_apps(ctx) else [])


async def read_resource(
    ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    if params.uri != URI or not client_supports_apps(ctx):
        raise MCPError(types.INVALID_PARAMS, f"no resource {params.uri}")
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=URI, mime_type=APP_MIME_TYPE, text=HTML)]
    )


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    capabilities = ctx.session.client_capabilities
    asked = capabilities.extensions if capabilities is not None else None
    text = json.dumps({"extensions": asked})
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server(
    "gated",
    on_list_tools=list_tools,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
    on_call_tool=call_tool,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
