"""The last few KB of what a child program Helm started wrote to stderr, its secrets removed.

An MCP stdio server or a coding agent that fails says why on stderr, most often; Helm keeps the
end of it (``LIMIT`` bytes) to show the user beside its own message. Every secret Helm gave the
child is replaced before anyone sees the text, and a secret cut at the start of what is kept is
dropped with it, so no part of one is ever shown.
"""

from __future__ import annotations

from collections.abc import Sequence

LIMIT = 4096


class StderrTail:
    """The last ``limit`` bytes of a child's stderr, each of ``secrets`` replaced by ``mask``."""

    def __init__(self, secrets: Sequence[str] = (), *, mask: str = "[removed]", limit: int = LIMIT) -> None:
        self._secrets = sorted({s.encode() for s in secrets if s}, key=len, reverse=True)
        self._mask = mask.encode()
        self._limit = limit
        self._longest = max((len(s) for s in self._secrets), default=0)
        self._buf = bytearray()
        self._dropped = False

    def feed(self, chunk: bytes) -> None:
        self._buf += chunk
        # Keep a secret's length more than shown, so a secret cut at the edge is still found whole.
        keep = self._limit + 2 * self._longest
        if len(self._buf) > keep:
            del self._buf[: len(self._buf) - keep]
            self._dropped = True

    def text(self) -> str:
        data = bytes(self._buf)
        for secret in self._secrets:
            data = data.replace(secret, self._mask)
        if self._dropped and self._longest:
            data = data[self._longest :]  # what may be the end of a secret cut in half
        return data[-self._limit :].decode("utf-8", "replace")
