"""The registry of connection kinds: one line per kind."""

from __future__ import annotations

from broker.kinds.base import KindSpec
from broker.kinds.db import rules as db_rules
from broker.kinds.files import rules as files_rules
from broker.kinds.http import rules as http_rules
from broker.kinds.mcp import rules as mcp_rules

KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec("http", http_rules, "broker.kinds.http.adapter:HttpKind", scalar_args=True),
        KindSpec("mcp", mcp_rules, "broker.kinds.mcp.adapter:McpKind"),
        KindSpec("tdt-mcp", mcp_rules, "broker.kinds.mcp.tdt:TdtKind"),
        KindSpec("files", files_rules, "broker.kinds.files.adapter:FilesKind"),
        KindSpec("db", db_rules, "broker.kinds.db.adapter:DbKind", scalar_args=True),
    )
}
