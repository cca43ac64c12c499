"""The terminal side of ``helm agent run``: safe output, and questions answered y/N.

Everything an agent sends is shown through ``safe``: terminal control sequences (ESC, CSI…),
other control characters and invisible bidi controls are printed as visible escapes, so an
agent cannot move the cursor, rewrite what is on screen or reorder what the user reads.

Questions are asked one at a time on stderr and answered on stdin; only "y" or "yes" is a Yes.
End of input, anything else, or no answer before the question's deadline is a No.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
import unicodedata
from collections.abc import AsyncIterator
from typing import TextIO

from broker.agents import PermissionQuestion
from broker.summary import Decision, WriteSummary

_BIDI = frozenset(
    "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
)


def safe(text: str) -> str:
    """``text`` with every control or invisible character but newline and tab escaped."""
    out: list[str] = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co"):  # Cf: bidi and zero-width marks
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _can_wait_on(stream: TextIO) -> bool:
    """A pipe, socket or terminal can block, so the loop waits on it; a file or /dev/null never
    blocks (and cannot be waited on)."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stream.isatty()


class StdinLines:
    """Lines from stdin without blocking the event loop (a pipe or a terminal is read by the
    loop; a regular file, which never blocks, directly)."""

    def __init__(self, reader: asyncio.StreamReader | None) -> None:
        self._reader = reader

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls) -> AsyncIterator[StdinLines]:
        loop = asyncio.get_running_loop()
        reader: asyncio.StreamReader | None = None
        transport = None
        if _can_wait_on(sys.stdin):
            reader = asyncio.StreamReader()
            protocol = asyncio.StreamReaderProtocol(reader)
            transport, _ = await loop.connect_read_pipe(lambda: protocol, sys.stdin)
        try:
            yield cls(reader)
        finally:
            if transport is not None:
                transport.close()

    async def readline(self) -> str | None:
        """One line (without its newline), or None at end of input."""
        if self._reader is None:
            line = sys.stdin.readline()
            return line.rstrip("\r\n") if line else None
        data = await self._reader.readline()
        return data.decode("utf-8", "replace").rstrip("\r\n") if data else None


class TerminalQuestions:
    """The ``PermissionAsker`` and the write ``Confirmer`` of the CLI."""

    def __init__(self, lines: StdinLines) -> None:
        self._lines = lines
        self._one_at_a_time = asyncio.Lock()

    async def _yes(self, text: str, question: str) -> bool:
        async with self._one_at_a_time:
            print("\n" + safe(text) + "\n", file=sys.stderr)
            print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
            answer = await self._lines.readline()
            if answer is None:
                print("(no answer: No)", file=sys.stderr)
            return answer is not None and answer.strip().lower() in ("y", "yes")

    async def permission(self, question: PermissionQuestion) -> str | None:
        allow = [o for o in question.options if o.kind == "allow_once"]
        allow = allow or [o for o in question.options if o.kind == "allow_always"]
        if not allow:
            return None
        always = " (always, for this session)" if allow[0].kind == "allow_always" else ""
        yes = await self._yes(question.as_text(), f"Allow{always}?")
        return allow[0].id if yes else None

    async def write(self, summary: WriteSummary) -> Decision:
        yes = await self._yes(summary.as_text(), "Write this file?")
        return Decision.CONFIRMED if yes else Decision.DECLINED
