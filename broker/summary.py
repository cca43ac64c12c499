"""What the write confirmation dialog shows, and the user's answer to it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class Decision(StrEnum):
    """The outcome of a confirmation: the user's click, or the token running out."""

    CONFIRMED = "confirmed"
    DECLINED = "declined"
    EXPIRED = "expired"


@dataclass(frozen=True)
class WriteSummary:
    """A write described exactly as Helm will send it, with its one-time token.

    ``title`` is the dialog's title ("Confirm file change"…); ``fields`` are (label, value)
    pairs — who, where, what; ``request`` the exact request text; ``diff`` a unified line diff
    for files. Every string may come from an extension or a server: show it as plain text.
    """

    token: str
    expires_in: float
    kind: str
    title: str
    workspace: str
    extension: str
    extension_name: str
    connection: str
    operation: str
    fields: tuple[tuple[str, str], ...]
    request: str
    request_digest: str
    diff: str | None = None

    def as_text(self) -> str:
        """The summary as plain text (the CLI prints this before asking y/N)."""
        lines = [self.title, ""]
        lines.append(f"Extension: {self.extension_name} ({self.extension})")
        lines.append(f"Workspace: {self.workspace}")
        lines += [f"{label}: {value}" for label, value in self.fields]
        lines += ["", self.request]
        if self.diff:
            lines += ["", self.diff]
        return "\n".join(lines)


class Confirmer(Protocol):
    """Asks the user about one write; a dialog in the UI, a prompt in the CLI, a fake in tests."""

    async def __call__(self, summary: WriteSummary) -> Decision: ...
