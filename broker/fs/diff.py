"""The line diff the write dialog shows, computed within a time budget.

``difflib`` is minimal but can take many seconds on two large texts with changes spread
everywhere. The matcher below checks a deadline at every step; past it, the diff becomes one
hunk that replaces everything between the common first and last lines. Either way it is a
correct unified diff of the two texts; only its size differs.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterator, Sequence

BUDGET = 1.0
"""Seconds the minimal diff may take before Helm shows the coarse one."""

CONTEXT = 3

Opcode = tuple[str, int, int, int, int]


class _OutOfTime(Exception):
    pass


class _TimedMatcher(difflib.SequenceMatcher[str]):
    def __init__(self, a: Sequence[str], b: Sequence[str], deadline: float) -> None:
        self.deadline = deadline
        super().__init__(None, a, b, autojunk=False)

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        if time.monotonic() > self.deadline:
            raise _OutOfTime
        return super().find_longest_match(alo, ahi, blo, bhi)


def _coarse(a: Sequence[str], b: Sequence[str]) -> list[list[Opcode]]:
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    ea, eb = len(a) - s, len(b) - s
    if p == ea and p == eb:
        return []
    group: list[Opcode] = []
    if p > 0:
        c = max(0, p - CONTEXT)
        group.append(("equal", c, p, c, p))
    group.append(("replace", p, ea, p, eb))
    if s > 0:
        k = min(s, CONTEXT)
        group.append(("equal", ea, ea + k, eb, eb + k))
    return [group]


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1 if length else start  # an empty range names the line before it
    return f"{first}" if length == 1 else f"{first},{length}"


def _hunks(a: Sequence[str], b: Sequence[str], groups: list[list[Opcode]]) -> Iterator[str]:
    for group in groups:
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            yield from ("-" + line for line in a[i1:i2])
            yield from ("+" + line for line in b[j1:j2])


def newline_lines(text: str) -> list[str]:
    """``text`` cut after each ``\n`` only: a file's lines as its tools count them.

    ``str.splitlines`` also cuts at U+2028, form feeds and the like, which would put a line of
    the file on two lines of the diff and hide those characters from the dialog.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_diff(path: str, old: str, new: str, budget: float = BUDGET) -> str:
    """A unified line diff of the current text ``old`` and the new text ``new``."""
    a, b = newline_lines(old), newline_lines(new)
    try:
        groups = list(_TimedMatcher(a, b, time.monotonic() + budget).get_grouped_opcodes(CONTEXT))
    except _OutOfTime:
        groups = _coarse(a, b)
    if not groups:
        return ""
    lines = [f"--- a/{path}\n", f"+++ b/{path}\n", *_hunks(a, b, groups)]
    # A last line without a newline would run into the next diff line; mark it as diff(1) does.
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
