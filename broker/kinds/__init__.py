"""The registry of connection kinds: one line per kind."""

from __future__ import annotations

from broker.kinds.base import KindSpec
from broker.kinds.db import rules as db_rules
from broker.kinds.db.adapter import DbKind
from broker.kinds.files import rules as files_rules
from broker.kinds.files.adapter import FilesKind
from broker.kinds.http import rules as http_rules
from broker.kinds.http.adapter import HttpKind
from broker.kinds.mcp import rules as mcp_rules
from broker.kinds.mcp.adapter import McpKind
from broker.kinds.mcp.tdt import TdtKind

KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec("http", http_rules, HttpKind),
        KindSpec("mcp", mcp_rules, McpKind),
        KindSpec("tdt-mcp", mcp_rules, TdtKind),
        KindSpec("files", files_rules, FilesKind),
        KindSpec("db", db_rules, DbKind),
    )
}
