"""Helm's demo MCP server (stdio): a few read-only tools with structured results.

Started by Helm with its own Python; it needs nothing but the ``mcp`` package.
"""

from __future__ import annotations

import datetime
import random

from mcp.server.mcpserver import MCPServer

server = MCPServer("helm-demo")

QUOTES = (
    "Simple things should be simple, complex things should be possible.",
    "Make it work, make it right, make it fast.",
    "Data from elsewhere is shown as text, never run.",
)


@server.tool()
def current_time() -> dict[str, str]:
    """The server's current time, in UTC and as local time."""
    now = datetime.datetime.now(datetime.UTC)
    return {"utc": now.isoformat(timespec="seconds"), "local": now.astimezone().isoformat(timespec="seconds")}


@server.tool()
def roll_dice(sides: int = 6, count: int = 1) -> dict[str, list[int]]:
    """Roll ``count`` dice with ``sides`` sides each (at most 10 dice of 100 sides)."""
    sides = max(2, min(sides, 100))
    count = max(1, min(count, 10))
    return {"rolls": [random.randint(1, sides) for _ in range(count)]}  # noqa: S311 (a game)


@server.tool()
def quote() -> dict[str, str]:
    """A short quote."""
    return {"text": random.choice(QUOTES)}  # noqa: S311 (not security related)


if __name__ == "__main__":
    server.run("stdio")
