"""``mcp`` and ``tdt-mcp`` connections: the typed model, manifest rules and review (no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from broker.kinds.base import Connection, ConnectionReview, Issue, ReviewItem

REVIEW_WARNING = (
    "Helm cannot know which tools of a server write data. A tool listed under operations runs "
    "without confirmation: check that none of them changes data."
)


@dataclass(frozen=True)
class McpConnection(Connection):
    """The tools an extension may call: ``reads`` run at once, ``writes`` are confirmed.
    ``server`` is the profile's name; None for ``tdt-mcp`` (the workspace's own TDT server)."""

    server: str | None
    reads: tuple[str, ...]
    writes: tuple[str, ...]

    @property
    def profile(self) -> str | None:
        return self.server


def operations(conn: Mapping[str, Any]) -> dict[str, bool]:
    ops = {name: False for name in conn.get("operations", [])}
    ops.update({name: True for name in conn.get("writes", [])})
    return ops


def parse(conn: Mapping[str, Any]) -> McpConnection:
    server = conn.get("server")
    return McpConnection(
        id=str(conn["id"]),
        kind=str(conn["kind"]),
        operations=operations(conn),
        server=None if server is None else str(server),
        reads=tuple(conn.get("operations", [])),
        writes=tuple(conn.get("writes", [])),
    )


def lint(conn: Mapping[str, Any], path: str, manifest: Mapping[str, Any]) -> Iterator[Issue]:
    """A tool is a read or a write, not both (the schema cannot compare two lists)."""
    reads, writes = conn.get("operations"), conn.get("writes")
    if not isinstance(reads, list) or not isinstance(writes, list):
        return
    for i, name in enumerate(writes):
        if isinstance(name, str) and name in reads:
            yield Issue(f"{path}.writes[{i}]", f"tool {name!r} is in both operations and writes")


def review(conn: McpConnection) -> ConnectionReview:
    items = [ReviewItem(f"tool {n}", "read", False) for n in conn.reads]
    items += [ReviewItem(f"tool {n}", "write — confirmed each time", True) for n in conn.writes]
    if conn.server is None:
        target = "the workspace's TDT server"
        warnings: tuple[str, ...] = ()
    else:
        target = f"MCP server {conn.server}"
        warnings = (REVIEW_WARNING,)
    return ConnectionReview(conn.id, conn.kind, target, tuple(items), warnings)
