"""``echo`` connections: the typed model, manifest rules and review (no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from broker.kinds.base import Connection, ConnectionReview, Issue, ReviewItem


@dataclass(frozen=True)
class EchoConnection(Connection):
    room: str


def operations(conn: Mapping[str, Any]) -> dict[str, bool]:
    ops = {phrase: False for phrase in conn.get("operations", [])}
    ops.update({phrase: True for phrase in conn.get("writes", [])})
    return ops


def parse(conn: Mapping[str, Any]) -> EchoConnection:
    return EchoConnection(
        id=str(conn["id"]), kind=str(conn["kind"]), operations=operations(conn), room=conn["room"]
    )


def lint(conn: Mapping[str, Any], path: str, manifest: Mapping[str, Any]) -> Iterator[Issue]:
    for i, phrase in enumerate(conn.get("writes", [])):
        if phrase in conn.get("operations", []):
            yield Issue(f"{path}.writes[{i}]", f"phrase {phrase!r} is both said and shouted")


def review(conn: EchoConnection) -> ConnectionReview:
    items = [ReviewItem(f"say {p}" if not w else f"shout {p}", "", w) for p, w in conn.operations.items()]
    return ConnectionReview(conn.id, conn.kind, f"room {conn.room}", tuple(items))
