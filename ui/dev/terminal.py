"""What ``helm dev`` streams to the terminal: one line per event, as the dev window sees it.

Each line starts with the local time and a tag — ``helm``, ``uses``, ``review``, ``lint``,
``reload``, ``call``, ``hint``, ``console``, ``error``, ``blocked`` — so an author can follow the
loop from the terminal (or ``grep`` it)::

    10:42:07.512 reload  index.html loaded in 184 ms
    10:42:07.530 call    notes.list 9 ms ok
    10:42:07.533 console [info] 3 notes (main.js:41)
    10:42:09.101 error   Uncaught TypeError: x is undefined (main.js:12)

Everything a page, a manifest or a server wrote is shown with its hidden characters as
``[U+XXXX]`` (``broker.visible``), and a message's further lines are indented under it, so
nothing the page logs can act on the terminal or pass for a line of Helm's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TextIO

from broker.kinds.base import Issue
from broker.visible import visible
from ui.dev.inspector import CallRecord

TAG_WIDTH = 7
CONSOLE_LEVELS = {0: "info", 1: "warning", 2: "error"}


def source_name(source: str, line: int) -> str:
    """``main.js:12`` for a script URL and line (the folder is the extension's own)."""
    name = source.rsplit("/", 1)[-1] or source
    return f"{name}:{line}"


def is_uncaught(level: int, message: str) -> bool:
    """Chromium reports an uncaught exception or rejection as an error starting ``Uncaught``."""
    return level == 2 and message.startswith("Uncaught")


MESSAGE_CHARS = 240
"""A failed call's line carries the start of its error message."""


def call_line(record: CallRecord) -> str:
    """``gh.issues 34 ms ok``, or the error code and the start of its message."""
    line = f"{record.connection}.{record.operation} {record.duration_ms:.0f} ms "
    if record.ok:
        return line + "ok"
    message = record.error_message.replace("\n", " ")
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 1] + "…"
    return line + (record.error_code or "no envelope") + (f": {message}" if message else "")


class TerminalReport:
    """Writes the lines to ``out`` (stdout for ``helm dev``; None writes nothing)."""

    def __init__(self, out: TextIO | None) -> None:
        self.out = out

    def line(self, tag: str, text: str) -> None:
        if self.out is None:
            return
        stamp = datetime.now().strftime("%H:%M:%S.%f")[:12]
        indent = " " * (len(stamp) + TAG_WIDTH + 2)
        body = visible(text).replace("\n", "\n" + indent)
        self.out.write(f"{stamp} {tag:<{TAG_WIDTH}} {body}\n")
        self.out.flush()

    def lines(self, tag: str, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(tag, text)

    def lint(self, issues: Sequence[Issue], file: str) -> None:
        for issue in issues:
            self.line("lint", f"{issue.path}: {issue.message}")
        if issues:
            self.line(
                "lint", f"{len(issues)} problem(s) in {file}: the page stays closed until they are fixed"
            )
        else:
            self.line("lint", f"{file}: no problems")

    def reloaded(self, entry: str, ms: float) -> None:
        self.line("reload", f"{entry} loaded in {ms:.0f} ms")

    def call(self, record: CallRecord, note: str = "") -> None:
        self.line("call", call_line(record) + (f" ({note})" if note else ""))
        for hint in record.hints:
            self.line("hint", f"{record.connection}.{record.operation}: {hint}")

    def console(self, level: int, message: str, line: int, source: str) -> None:
        where = source_name(source, line)
        if is_uncaught(level, message):
            self.line("error", f"{message} ({where})")
        else:
            self.line("console", f"[{CONSOLE_LEVELS.get(level, str(level))}] {message} ({where})")
