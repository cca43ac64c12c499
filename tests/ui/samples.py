"""Sample data for screen tests: write summaries as the broker builds them, hostile strings."""

from __future__ import annotations

from broker.context import ExtensionFrame
from broker.summary import WriteSummary

HTML = "<b>x</b><img src=x>"
BIDI = "invoice\u202egpj.exe"
LONG = "A" * 100_000

DIFF = "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n line one\n-old line\n+new line\n"


def summary(
    kind: str = "http",
    *,
    extension: str = "com.example.test",
    expires_in: float = 300.0,
    fields: tuple[tuple[str, str], ...] | None = None,
    request: str = "PATCH https://x/y\n{}",
    diff: str | None = None,
    name: str = "Test extension",
) -> WriteSummary:
    defaults = {
        "http": (
            ("Service", "github"),
            ("Method", "PATCH"),
            ("URL", "https://api.github.com/repos/me/app/issues/7"),
        ),
        "db": (("Query", "close"), ("Connection", "local-app")),
        "mcp": (("MCP server", "github"), ("Tool", "create_issue")),
        "files": (("Project", "app"), ("Path", "notes.md")),
    }
    return WriteSummary(
        token="tok",
        expires_in=expires_in,
        kind=kind,
        title={
            "http": "Confirm request",
            "db": "Confirm database write",
            "mcp": "Confirm tool call",
            "files": "Confirm file change",
        }.get(kind, "Confirm"),
        requester=ExtensionFrame("ws", extension, "w1", name),
        connection="conn",
        operation="op",
        fields=fields if fields is not None else defaults.get(kind, ()),
        request=request,
        request_digest="d" * 64,
        diff=diff,
    )


def manifest_raw(**extra: object) -> dict[str, object]:
    """A valid manifest with one connection of each kind, writes included."""
    raw: dict[str, object] = {
        "id": "com.example.board",
        "name": "Board",
        "version": "1.2.0",
        "kind": "widget",
        "entry": "index.html",
        "permissions": {"write": True},
        "settings": {
            "repo": {"type": "string", "label": "Repository", "required": True, "maxLength": 100},
            "limit": {"type": "integer", "label": "Items", "default": 20, "minimum": 1, "maximum": 100},
            "state": {"type": "choice", "label": "State", "choices": ["open", "closed"], "default": "open"},
            "compact": {"type": "boolean", "label": "Compact rows", "default": False},
        },
        "connections": [
            {
                "id": "gh",
                "kind": "http",
                "service": "github",
                "calls": {
                    "issues": {"method": "GET", "path": "/repos/{owner}/{repo}/issues"},
                    "close": {
                        "method": "PATCH",
                        "path": "/repos/{owner}/{repo}/issues/{number}",
                        "body": {"state": "closed"},
                        "write": True,
                    },
                },
            },
            {
                "id": "tools",
                "kind": "mcp",
                "server": "github",
                "operations": ["list_issues"],
                "writes": ["create_issue"],
            },
            {
                "id": "app",
                "kind": "db",
                "service": "local-app",
                "engine": "sqlite",
                "queries": {
                    "recent": {
                        "sql": "SELECT id, title FROM tickets ORDER BY id DESC LIMIT ?",
                        "params": ["limit"],
                    }
                },
            },
        ],
    }
    raw.update(extra)
    return raw
