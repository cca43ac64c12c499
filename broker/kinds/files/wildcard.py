"""One glob segment against one name, without backtracking, and the work budget of a call.

A segment with at most one star (``*.md``, ``report-??.csv``, ``*a?a?b``) is one regular
expression, run by the C engine (``OneStar``): its only repeat is that star, which can end at
one of at most len(name) places, each checked against the fixed-length rest, so the engine's
work is at most len(name) times the length of the segment, whatever the name. Such a segment
costs what the checks at its ends cost in steps (one, plus one per literal stretch).

A segment with more stars uses the matcher below. A segment such as ``*a?b*c`` splits at its
stars into pieces of fixed length (``""``, ``a?b``, ``c``). The first piece must match at the
start of the name, the last one at its end, and the pieces between them in order, anywhere in
between. Taking each middle piece at its leftmost place is always right (a later place only
leaves less room for the pieces after it), so the matcher never goes back: the places it tries
for one piece lie before the place it keeps, and the next piece starts after that. The work is
linear in the length of the name for a given segment, whatever the number of stars —
``*a*a*a*a*b`` against 255 ``a`` takes a few hundred steps, where a backtracking regular
expression takes minutes.

Every comparison is paid for from a ``Budget``: one step per C-level ``str.startswith``, or per
search of a middle piece (a regular expression without repeats, so each start is tried once),
over the name (at most 255 characters), plus one per segment tried, so a call's
matching work is bounded however hostile its globs and paths are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from broker.errors import CallError, ErrorCode


class Budget:
    """The glob-matching steps one call may still take; running out is ``too_large``."""

    __slots__ = ("left", "limit")

    def __init__(self, steps: int) -> None:
        self.limit = self.left = steps

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
    """Index in ``runs`` of the longest stretch; -1 if the piece is all ``?``."""
    search: Callable[[str, int, int], re.Match[str] | None]
    """The piece as a regular expression without any repeat: ``?`` is any one character."""

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
        # One C-level scan: a pattern without repeats tries each start once, at most len(runs)
        # comparisons each, and the leftmost hit is the one kept.
        budget.spend(1 + len(self.runs))
        hit = self.search(name, lo, hi)
        return -1 if hit is None else hit.start()


def _piece(text: str) -> Piece:
    runs: list[tuple[int, str]] = []
    start = 0
    for stretch in text.split("?"):
        if stretch:
            runs.append((start, stretch))
        start += len(stretch) + 1
    anchor = max(range(len(runs)), key=lambda i: len(runs[i][1]), default=-1)
    return Piece(len(text), tuple(runs), anchor, re.compile(piece_regex(text), re.DOTALL).search)


def piece_regex(text: str, any_char: str = ".") -> str:
    """A run of literal characters and ``?`` as a regular expression with no repeat in it."""
    return "".join(any_char if c == "?" else re.escape(c) for c in text)


def segment_regex(segment: str, any_char: str = ".") -> str:
    """A segment with at most one ``*`` as a regular expression whose only repeat is that star.

    ``any_char`` is what ``?`` and the star match: ``.`` for one name, ``[^/]`` for a name
    inside a whole path (the star cannot then reach into the next segment).
    """
    pieces = segment.split("*")
    if len(pieces) > 2:
        raise ValueError(f"{segment!r} has more than one star")
    head = "(?!\\.)" if segment[0] in "*?" else ""  # a wildcard never matches a leading dot
    return head + f"{any_char}*".join(piece_regex(p, any_char) for p in pieces)


@dataclass(frozen=True, slots=True)
class OneStar:
    """A compiled segment with at most one ``*`` (see the module docstring)."""

    text: str
    fullmatch: Callable[[str], re.Match[str] | None]
    cost: int
    """Steps of one name tried: the checks at the ends the linear matcher would make."""

    def matches(self, name: str, budget: Budget) -> bool:
        budget.left -= self.cost
        if budget.left < 0:
            budget.overdrawn()
        return self.fullmatch(name) is not None


@dataclass(frozen=True, slots=True)
class Wildcard:
    """A compiled segment with two stars or more (see the module docstring)."""

    head: Piece
    middle: tuple[Piece, ...]
    tail: Piece
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
        if self.ends is not None and not (name.startswith(self.ends[0]) and name.endswith(self.ends[1])):
            return False
        lo, hi = self.head.size, len(name) - self.tail.size
        if not (self.head.at(name, 0) and self.tail.at(name, hi)):
            return False
        for piece in self.middle:
            pos = piece.find(name, lo, hi, budget)
            if pos < 0:
                return False
            lo = pos + piece.size
        return True


def compile_wildcard(segment: str) -> OneStar | Wildcard:
    """Compile one segment that has a ``*`` or a ``?`` (``**`` segments are handled by globs)."""
    if segment.count("*") <= 1:
        runs = sum(len(_piece(p).runs) for p in segment.split("*"))
        pattern = re.compile(segment_regex(segment), re.DOTALL)
        return OneStar(segment, pattern.fullmatch, 1 + runs)
    parts = [_piece(p) for p in segment.split("*")]
    no_dot = segment[0] in "*?"
    size = sum(p.size for p in parts)
    head, tail = parts[0], parts[-1]
    texts = segment.split("*")
    ends = (texts[0], texts[-1]) if "?" not in texts[0] + texts[-1] else None
    cost = 1 + len(head.runs) + len(tail.runs)
    return Wildcard(head, tuple(parts[1:-1]), tail, no_dot, size, cost, ends)
