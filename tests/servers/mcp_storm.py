"""An MCP server over stdio that storms its client on purpose (no user has one like it).

Run: ``python -m tests.servers.mcp_storm [--tools N] [--page P]``. Plain JSON-RPC on
stdin/stdout, so every misbehaviour is exact:

* it offers ``N`` tools (default 200,000) in pages of ``P`` (default 10,000), and sends
  ``notifications/tools/list_changed`` after every answer it gives;
* ``echo`` answers its ``text``; ``listings`` answers how many ``tools/list`` requests it got;
* ``nested`` answers a ``structuredContent`` nested ``depth`` lists deep (default 100,000),
  which no JSON-RPC reader will take;
* ``malformed`` answers JSON-RPC whose result is not a tool result (``content`` is a string).
"""

from __future__ import annotations

import json
import sys
from typing import Any

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
FIRST = [
    {"name": "echo", "description": "echo its text", "inputSchema": OBJECT},
    {"name": "listings", "description": "how many listings", "inputSchema": OBJECT},
    {"name": "nested", "description": "a deeply nested answer", "inputSchema": OBJECT},
    {"name": "malformed", "description": "an answer that is not a tool result", "inputSchema": OBJECT},
]


def option(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


TOOLS, PAGE = option("--tools", 200_000), option("--page", 10_000)
state = {"listings": 0}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def changed() -> None:
    send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def tool(i: int) -> dict[str, Any]:
    if i < len(FIRST):
        return FIRST[i]
    return {"name": f"tool_{i}", "description": f"tool number {i}", "inputSchema": OBJECT}


def list_page(rid: Any, cursor: str | None) -> None:
    state["listings"] += 1
    start = int(cursor) if cursor else 0
    end = min(start + PAGE, TOOLS)
    page: dict[str, Any] = {"tools": [tool(i) for i in range(start, end)]}
    if end < TOOLS:
        page["nextCursor"] = str(end)
    send({"jsonrpc": "2.0", "id": rid, "result": page})


def call(rid: Any, name: str, args: dict[str, Any]) -> None:
    if name == "nested":
        depth = int(args.get("depth", 100_000))
        head = '{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":{"content":[],'
        head += '"structuredContent":{"a":'
        sys.stdout.write(head + "[" * depth + "]" * depth + "}}}\n")
        sys.stdout.flush()
        return
    if name == "malformed":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": "not a list of blocks"}})
        return
    text = str(state["listings"]) if name == "listings" else str(args.get("text", ""))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "storm", "version": "1"}}})  # fmt: skip
            continue
        if method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/list":
            list_page(rid, (message.get("params") or {}).get("cursor"))
        elif method == "tools/call":
            params = message["params"]
            call(rid, params["name"], params.get("arguments") or {})
        elif rid is not None and method is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
        else:
            continue
        changed()


if __name__ == "__main__":
    main()
