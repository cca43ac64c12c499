"""Manifest rules and review for ``mcp`` and ``tdt-mcp`` connections (no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from broker.kinds.base import ConnectionReview, Issue, ReviewItem

REVIEW_WARNING = (
    "Helm cannot know which tools of a server write data. A tool listed under operations runs "
    "without confirmation: check that none of them changes data."
)


def operations(conn: Mapping[str, Any]) -> dict[str, bool]:
    ops = {name: False for name in conn.get("operations", [])}
    ops.update({name: True for name in conn.get("writes", [])})
    return ops


def lint(conn: Mapping[str, Any], path: str, manifest: Mapping[str, Any]) -> Iterator[Issue]:
    reads = conn.get("operations", [])
    for i, name in enumerate(conn.get("writes", [])):
        if name in reads:
            yield Issue(f"{path}.writes[{i}]", f"tool {name!r} is in both operations and writes")
    if not reads and not conn.get("writes"):
        yield Issue(f"{path}.operations", "declare at least one tool")


def review(conn: Mapping[str, Any]) -> ConnectionReview:
    items = [ReviewItem(f"tool {n}", "read", False) for n in conn.get("operations", [])]
    items += [ReviewItem(f"tool {n}", "write — confirmed each time", True) for n in conn.get("writes", [])]
    if conn["kind"] == "tdt-mcp":
        target = "the workspace's TDT server"
        warnings: tuple[str, ...] = ()
    else:
        target = f"MCP server {conn['server']}"
        warnings = (REVIEW_WARNING,)
    return ConnectionReview(conn["id"], conn["kind"], target, tuple(items), warnings)
