"""The running kind that answers every call from fixtures (``helm dev --replay``, ``helm ext test``).

The broker is given one ``ReplayKind`` in place of every kind's adapter, so everything before
the adapter stays as it is: the rate limit, the manifest's allowlist, the approval, argument
checks, and for a write the write pipeline — the real confirmation dialog with its one-time
token — before the recorded envelope is returned. Nothing is sent anywhere and no profile is
read. A call with no fixture ends ``unavailable``, with a message that says which file to add
it to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from broker.authoring.fixtures import FixtureBook
from broker.errors import CallError, ErrorCode, FixtureError
from broker.kinds.base import JSON, Call, Connection, Kind, WriteDetails
from broker.settings import Workspace

REPLAY_NOTE = "Replayed from fixtures: nothing is sent. Confirm returns the recorded envelope."


class ReplayKind:
    """A ``Kind`` whose calls are answered by a ``FixtureBook``."""

    def __init__(self, book: FixtureBook) -> None:
        self.book = book

    async def pin(self, workspace: Workspace, conn: Connection) -> Mapping[str, JSON]:
        return {}

    async def describe(self, call: Call[Connection]) -> WriteDetails:
        envelope = self._envelope(call)
        file = str(self.book.file(call.connection_id))
        outcome = "ok" if envelope.get("ok") else f"error {envelope['error']['code']}"
        args = json.dumps(dict(call.args), indent=2, ensure_ascii=False, sort_keys=True)
        request = f"{REPLAY_NOTE}\n{call.operation} with the arguments\n{args}"
        fields = (
            ("Connection", f"{call.connection_id} ({call.connection.kind}, replayed)"),
            ("Operation", call.operation),
            ("Fixture", f"{file} ({outcome})"),
        )
        binding = {"replay": file, "operation": call.operation, "args": dict(call.args)}
        return WriteDetails("Confirm replayed write", fields, request, binding)

    async def execute(self, call: Call[Connection]) -> dict[str, JSON]:
        return dict(self._envelope(call))

    def _envelope(self, call: Call[Connection]) -> Mapping[str, Any]:
        try:
            found = self.book.find(call.connection_id, call.operation, call.args)
        except FixtureError as exc:
            raise CallError(ErrorCode.UNAVAILABLE, str(exc)) from exc
        if found is None:
            raise CallError(
                ErrorCode.UNAVAILABLE,
                f"no fixture answers {call.connection_id}.{call.operation} with these arguments: "
                f"add one to {self.book.file(call.connection_id)} or record it with helm dev --record",
            )
        return found.envelope

    async def aclose(self) -> None:
        return None


def replay_kinds(book: FixtureBook, names: tuple[str, ...]) -> dict[str, Kind[Any]]:
    """One ``ReplayKind`` for every kind name, for ``Broker(kinds=...)``."""
    kind = ReplayKind(book)
    return dict.fromkeys(names, kind)
