"""What the write confirmation dialog shows, and the user's answer to it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from broker.context import Requester
from broker.visible import visible


class Decision(StrEnum):
    """The outcome of a confirmation: the user's click, the token running out, or the question
    withdrawn because its requester ended (an agent that stopped while it was asked)."""

    CONFIRMED = "confirmed"
    DECLINED = "declined"
    EXPIRED = "expired"
    WITHDRAWN = "cancelled"


@dataclass(frozen=True)
class WriteSummary:
    """A write described exactly as Helm will send it, with its one-time token.

    ``title`` is the dialog's title ("Confirm file change"…); ``fields`` are (label, value)
    pairs — who, where, what; ``request`` the exact request text; ``diff`` a unified line diff
    for files. ``requester`` is who asks (``broker.context``); a dialog names it by its
    ``label``, the name with the id beside it. Every string may come from an extension, an
    agent or a server: show it as plain text.
    """

    token: str
    expires_in: float
    kind: str
    title: str
    requester: Requester
    connection: str
    operation: str
    fields: tuple[tuple[str, str], ...]
    request: str
    request_digest: str
    diff: str | None = None

    @property
    def workspace(self) -> str:
        return self.requester.workspace

    @property
    def who(self) -> str:
        """Who asks, for a person: its name with its id beside it."""
        return self.requester.label

    def fields_beside_request(self) -> tuple[tuple[str, str], ...]:
        """The fields that say something the request text does not: a field whose value the
        request shows as whole lines (a db write's SQL, its ``args: […]``) is not repeated."""
        lines = self.request.splitlines()

        def shown(label: str, value: str) -> bool:
            block = value.splitlines()
            if not block:
                return False
            n = len(block)
            if any(lines[i : i + n] == block for i in range(len(lines) - n + 1)):
                return True
            return n == 1 and f"{label.lower()}: {value}" in lines

        return tuple((label, value) for label, value in self.fields if not shown(label, value))

    def as_text(self) -> str:
        """The summary as text for a terminal (the CLI prints this before asking y/N).

        Every value may come from an extension, a server or a file, so hidden characters
        (ESC, C1 controls, bidi, line separators…) are shown as ``[U+XXXX]``: what the terminal
        shows is exactly what Helm will send, and nothing in it can act on the terminal.
        """
        lines = [self.title, ""]
        lines.append(f"Asked by: {self.who}")
        fields = self.fields_beside_request()
        if self.workspace and not any(label == "Workspace" for label, _ in fields):
            lines.append(f"Workspace: {self.workspace}")
        lines += [f"{label}: {value}" for label, value in fields]
        lines += ["", self.request]
        if self.diff:
            lines += ["", self.diff]
        return visible("\n".join(lines))


class Confirmer(Protocol):
    """Asks the user about one write; a dialog in the UI, a prompt in the CLI, a fake in tests."""

    async def __call__(self, summary: WriteSummary) -> Decision: ...
