"""Sample data for screen tests: write summaries as the broker builds them, hostile strings."""

from __future__ import annotations

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
        workspace="ws",
        extension=extension,
        extension_name=name,
        connection="conn",
        operation="op",
        fields=fields if fields is not None else defaults.get(kind, ()),
        request=request,
        request_digest="d" * 64,
        diff=diff,
    )
