"""Helm's stand-in for TDT in the demo, on a machine where ``tdt`` is not installed.

It answers the demo widgets' reads with TDT envelopes (``{api_version: 1, ok, data, coverage,
warnings, error}``, with TDT's data shapes) built from made-up data, and every answer's warnings
say that it is the stand-in and that nothing is stored. It offers no write tools. Helm starts it
as it starts TDT (``… --workspace ROOT mcp serve --profile P``); those arguments are ignored.
"""

from __future__ import annotations

import datetime
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("helm-demo-tdt-stand-in")
WARNING = (
    "Helm's stand-in for TDT: tdt is not installed, so this is made-up data and nothing is stored. "
    "Install thisdamnthing[mcp] (the tdt command) for a real TDT workspace."
)
KEY = "0" * 24


def envelope(data: Any) -> dict[str, Any]:
    return {
        "api_version": 1,
        "ok": True,
        "data": data,
        "coverage": {"truncated": False, "omissions": []},
        "warnings": [WARNING],
        "error": None,
    }


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


@server.tool()
def tdt_workspace_status() -> dict[str, Any]:
    """The workspace's status, as TDT reports it (made-up numbers)."""
    counts = ("incomplete_captures", "projects_total", "projects_available", "projects_missing",
              "projects_archived", "due_reminders", "pending_candidates")  # fmt: skip
    status: dict[str, Any] = {"workspace_key": KEY, "observed_at": now(), "recovery_markers": []}
    return envelope(status | dict.fromkeys(counts, 0))


@server.tool()
def tdt_reminder_list() -> dict[str, Any]:
    """Two made-up reminders."""
    today = datetime.date.today()
    items = [
        {
            "id": f"{n}" * 64,
            "path": f"work/reminders/demo-{n}.md",
            "uri": f"tdt://{KEY}/demo-{n}",
            "revision": "0" * 64,
            "reminder_revision": 1,
            "status": "pending",
            "title": title,
            "due_at": f"{today + datetime.timedelta(days=n)}T09:00:00+00:00",
            "timezone": "UTC",
            "notified_at": None,
            "claimed": False,
        }
        for n, title in ((1, "Look at every widget"), (2, "Open Settings → Connections"))
    ]
    return envelope({"items": items, "next_cursor": None, "inventory_revision": "0" * 64})


@server.tool()
def tdt_brain_search(query: str) -> dict[str, Any]:
    """No approved knowledge: the stand-in has no brain."""
    return envelope({"items": [], "limit": 20, "depth": 1, "limit_reached": False})


@server.tool()
def tdt_candidate_list() -> dict[str, Any]:
    """No candidates: the stand-in has no brain."""
    return envelope({"items": [], "next_cursor": None, "inventory_revision": "0" * 64})


if __name__ == "__main__":
    server.run("stdio")
