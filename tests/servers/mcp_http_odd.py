"""A streamable HTTP MCP server on 127.0.0.1 that floods and checks a bearer token.

Run: ``python tests/servers/mcp_http_odd.py PORT TOKEN json|sse``. Every request must carry
``Authorization: Bearer TOKEN`` (401 otherwise). Tools: ``flood`` (a text result of ``size``
bytes), ``whoami`` (the Authorization header it received, so tests see exactly what Helm sent),
``refuse`` (a tool error whose message quotes that header, as careless servers do: ``ToolError``
is the error whose text the SDK's server sends on).
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

PORT, TOKEN, MODE = int(sys.argv[1]), sys.argv[2], sys.argv[3]

server = MCPServer("odd-http", log_level="WARNING")


@server.tool()
def flood(size: int) -> str:
    """A result of ``size`` bytes."""
    return "z" * size


@server.tool()
def whoami(ctx: Context) -> dict[str, Any]:
    """The Authorization header of this request."""
    return {"authorization": (ctx.headers or {}).get("authorization")}


@server.tool()
def refuse(ctx: Context) -> str:
    """Fails, quoting the Authorization header of this request."""
    raise ToolError(f"not allowed with {(ctx.headers or {}).get('authorization')}")


def guarded(app: Any) -> Any:
    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no"})
                return
        await app(scope, receive, send)

    return asgi


if __name__ == "__main__":
    app = guarded(server.streamable_http_app(json_response=MODE == "json"))
    print("odd-http ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning", lifespan="on")
