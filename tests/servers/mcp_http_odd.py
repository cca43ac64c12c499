"""A streamable HTTP MCP server on 127.0.0.1 that floods and checks a bearer token.

Run: ``python tests/servers/mcp_http_odd.py PORT TOKEN json|sse``. Every request must carry
``Authorization: Bearer TOKEN`` (401 otherwise). Tools: ``flood`` (a text result of ``size``
bytes), ``whoami`` (the Authorization header it received, so tests see exactly what Helm sent),
``refuse`` (a tool error whose message quotes that header, as careless servers do).
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.fastmcp import Context, FastMCP

PORT, TOKEN, MODE = int(sys.argv[1]), sys.argv[2], sys.argv[3]

server = FastMCP("odd-http", host="127.0.0.1", port=PORT, json_response=MODE == "json", log_level="WARNING")


@server.tool()
def flood(size: int) -> str:
    """A result of ``size`` bytes."""
    return "z" * size


@server.tool()
def whoami(ctx: Context) -> dict[str, Any]:  # type: ignore[type-arg]
    """The Authorization header of this request."""
    request = ctx.request_context.request
    header = request.headers.get("authorization") if request is not None else None
    return {"authorization": header}


@server.tool()
def refuse(ctx: Context) -> str:  # type: ignore[type-arg]
    """Fails, quoting the Authorization header of this request."""
    request = ctx.request_context.request
    header = request.headers.get("authorization") if request is not None else None
    raise ValueError(f"not allowed with {header}")


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
    app = guarded(server.streamable_http_app())
    print("odd-http ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning", lifespan="on")
