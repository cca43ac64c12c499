"""A TDT-style demo server (MCP over stdio) answering with TDT envelopes.

It stands in for ``tdt mcp serve`` in the demo workspace: two read tools whose results are
``{api_version, ok, data, coverage, warnings, error}``, built from the workspace folder it is
started in.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import FastMCP

server = FastMCP("helm-demo-tdt")


def envelope(data: Any, warnings: list[str] | None = None) -> dict[str, Any]:
    return {
        "api_version": "1",
        "ok": True,
        "data": data,
        "coverage": {"complete": True},
        "warnings": warnings or [],
        "error": None,
    }


@server.tool()
def tdt_workspace_status() -> dict[str, Any]:
    """A summary of the workspace: its files and when it last changed."""
    root = Path.cwd()
    files = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]
    latest = max((p.stat().st_mtime for p in files), default=0.0)
    return envelope(
        {
            "workspace": root.name,
            "files": len(files),
            "last_change": datetime.datetime.fromtimestamp(latest, datetime.UTC).isoformat(
                timespec="seconds"
            ),
            "profile": "everyday" if "--profile" in sys.argv else "default",
        }
    )


@server.tool()
def tdt_reminder_list() -> dict[str, Any]:
    """The demo's reminders."""
    today = datetime.date.today()
    return envelope(
        {
            "reminders": [
                {"id": "r1", "text": "Look at every widget", "due": today.isoformat()},
                {
                    "id": "r2",
                    "text": "Open Settings → Connections",
                    "due": (today + datetime.timedelta(days=1)).isoformat(),
                },
            ]
        },
        warnings=["demo data: these reminders are not stored anywhere"],
    )


if __name__ == "__main__":
    server.run("stdio")
