"""One glob segment against one name, without backtracking, and the work budget of a call.

A segment such as ``*a?b*c`` splits at its stars into pieces of fixed length (``""``, ``a?b``,
``c``). The first piece must match at the start of the name, the last one at its end, and the
pieces between them in order, anywhere in between. Taking each middle piece at its leftmost
place is always right (a later place only leaves less room for the pieces after it), so the
matcher never goes back: the places it tries for one piece lie before the place it keeps, and
the next piece starts after that. The work is linear in the length of the name for a given
segment, whatever the number of stars — ``*a*a*a*a*b`` against 255 ``a`` takes a few hundred
steps, where a backtracking regular expression takes minutes.

Every comparison is paid for from a ``Budget``: one step per C-level ``str.startswith`` or
``str.find`` over the name (at most 255 characters), plus one per segment tried, so a call's
matching work is bounded however hostile its globs and paths are.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.errors import CallError, ErrorCode


class Budget:
    """The glob-matching steps one call may still take; running out is ``too_large``."""

    def __init__(self, steps: int) -> None:
        self.limit = steps
        self.left = steps

    @property
    def spent(self) -> int:
        return self.limit - self.left

    def spend(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            self.overdrawn()

    def overdrawn(self) -> None:
        if self.left < 0:
            raise CallError(
                ErrorCode.TOO_LARGE,
                f"matching the declared globs would take more than {self.limit:,} steps in this "
                "call; declare simpler globs or ask for fewer paths",
            )


@dataclass(frozen=True, slots=True)
class Piece:
    """A run between stars: literal characters and ``?``, so of a fixed length."""

    size: int
    runs: tuple[tuple[int, str], ...]
    """(offset, text) of each stretch of literal characters."""
    anchor: int
    """Index in ``runs`` of the longest stretch, searched for first; -1 if the piece is all ``?``."""

    def at(self, name: str, pos: int) -> bool:
        """Whether the piece matches ``name[pos:pos + size]`` (the caller checked it fits and
        paid ``len(runs)`` steps)."""
        return all(name.startswith(text, pos + off) for off, text in self.runs)

    def find(self, name: str, lo: int, hi: int, budget: Budget) -> int:
        """The leftmost place ``p`` with ``lo <= p`` and ``p + size <= hi`` where it matches, or -1."""
        if hi - lo < self.size:
            return -1
        if self.anchor < 0:
            return lo
        off, text = self.runs[self.anchor]
        while True:
            budget.spend(1 + len(self.runs))
            hit = name.find(text, lo + off, hi - self.size + off + len(text))
            if hit < 0:
                return -1
            start = hit - off
            if self.at(name, start):
                return start
            lo = start + 1


def _piece(text: str) -> Piece:
    runs: list[tuple[int, str]] = []
    start = 0
    for stretch in text.split("?"):
        if stretch:
            runs.append((start, stretch))
        start += len(stretch) + 1
    anchor = max(range(len(runs)), key=lambda i: len(runs[i][1]), default=-1)
    return Piece(len(text), tuple(runs), anchor)


@dataclass(frozen=True, slots=True)
class Wildcard:
    """A compiled segment with ``*`` or ``?`` (see the module docstring)."""

    head: Piece
    middle: tuple[Piece, ...]
    tail: Piece | None
    """None when the segment has no star: then ``head`` is the whole segment."""
    no_leading_dot: bool
    """The segment starts with a wildcard, which never matches a leading dot."""
    min_size: int
    edge_cost: int
    """Steps of the checks at both ends: one, plus one per literal stretch of head and tail."""
    ends: tuple[str, str] | None
    """Head and tail as plain text when neither has a ``?`` (the common ``*.md``)."""

    def matches(self, name: str, budget: Budget) -> bool:
        # Runs for every name a list walks: the budget is paid inline, not by a call.
        budget.left -= self.edge_cost
        if budget.left < 0:
            budget.overdrawn()
        if len(name) < self.min_size or (self.no_leading_dot and name.startswith(".")):
            return False
        if self.ends is not None:
            if not (name.startswith(self.ends[0]) and name.endswith(self.ends[1])):
                return False
            if not self.middle:
                return True
        if self.tail is None:
            return len(name) == self.head.size and self.head.at(name, 0)
        lo, hi = self.head.size, len(name) - self.tail.size
        if not (self.head.at(name, 0) and self.tail.at(name, hi)):
            return False
        for piece in self.middle:
            pos = piece.find(name, lo, hi, budget)
            if pos < 0:
                return False
            lo = pos + piece.size
        return True


def compile_wildcard(segment: str) -> Wildcard:
    """Compile one segment that has a ``*`` or a ``?`` (``**`` segments are handled by globs)."""
    parts = [_piece(p) for p in segment.split("*")]
    no_dot = segment[0] in "*?"
    size = sum(p.size for p in parts)
    if len(parts) == 1:
        return Wildcard(parts[0], (), None, no_dot, size, 1 + len(parts[0].runs), None)
    head, tail = parts[0], parts[-1]
    texts = segment.split("*")
    ends = (texts[0], texts[-1]) if "?" not in texts[0] + texts[-1] else None
    cost = 1 + len(head.runs) + len(tail.runs)
    return Wildcard(head, tuple(parts[1:-1]), tail, no_dot, size, cost, ends)
