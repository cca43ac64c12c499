"""The dashboard's grid, as data: how many columns fit, each widget's span, where it goes.

No Qt here. The dashboard is a grid of columns at least ``COLUMN_MIN`` pixels wide (as many as
fit the window, never fewer than one) and rows ``ROW_HEIGHT`` pixels high. A widget spans
``cols`` columns and ``rows`` rows; ``pack`` places widgets in the user's order, each at the
first free spot from the top left, so the grid fills the window's width and only ever scrolls
down. A span wider than the window has columns is drawn as wide as the window.

A manifest may give a size hint (``size``: ``small``, ``medium``, ``large``, or
``{"minWidth": px, "minHeight": px}``): a named size is where the widget starts; a minimum is
also the smallest the user can make it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

COLUMN_MIN = 300
ROW_HEIGHT = 100
GAP = 8
MAX_COLS = 4
MAX_ROWS = 10


@dataclass(frozen=True, slots=True)
class Span:
    cols: int
    rows: int

    def clamped(self, minimum: Span) -> Span:
        return Span(
            min(max(self.cols, minimum.cols, 1), MAX_COLS), min(max(self.rows, minimum.rows, 1), MAX_ROWS)
        )


NAMED = {"small": Span(1, 3), "medium": Span(2, 3), "large": Span(2, 5)}
DEFAULT = Span(1, 3)
SMALLEST = Span(1, 2)


@dataclass(frozen=True, slots=True)
class Hint:
    """Where a widget starts and the smallest it may become, from its manifest."""

    start: Span = DEFAULT
    minimum: Span = SMALLEST


def hint_of(manifest: Mapping[str, Any]) -> Hint:
    """The size hint of a (validated) manifest; none gives a one-column widget."""
    size = manifest.get("size")
    if isinstance(size, str) and size in NAMED:
        return Hint(NAMED[size], SMALLEST)
    if isinstance(size, Mapping):
        minimum = Span(
            _cells(size.get("minWidth"), COLUMN_MIN, SMALLEST.cols),
            _cells(size.get("minHeight"), ROW_HEIGHT, SMALLEST.rows),
        ).clamped(SMALLEST)
        return Hint(DEFAULT.clamped(minimum), minimum)
    return Hint()


def _cells(pixels: Any, unit: int, least: int) -> int:
    if not isinstance(pixels, int) or isinstance(pixels, bool):
        return least
    return max(least, math.ceil((pixels + GAP) / (unit + GAP)))


def columns_for(width: int) -> int:
    """How many columns of at least ``COLUMN_MIN`` pixels fit ``width`` (gaps included)."""
    return max(1, (width - GAP) // (COLUMN_MIN + GAP))


@dataclass(frozen=True, slots=True)
class Placement:
    """A widget's cell: column and row of its top left corner, and its span (in cells)."""

    id: str
    col: int
    row: int
    cols: int
    rows: int


def pack(items: Iterable[tuple[str, Span]], columns: int) -> list[Placement]:
    """Place each widget, in order, at the first spot where it fits (top to bottom, left to right)."""
    taken: set[tuple[int, int]] = set()
    placed = []
    for item_id, span in items:
        cols = min(span.cols, columns)
        row = col = 0
        while not _free(taken, col, row, cols, span.rows):
            col += 1
            if col + cols > columns:
                col, row = 0, row + 1
        taken.update((c, r) for c in range(col, col + cols) for r in range(row, row + span.rows))
        placed.append(Placement(item_id, col, row, cols, span.rows))
    return placed


def _free(taken: set[tuple[int, int]], col: int, row: int, cols: int, rows: int) -> bool:
    return all((c, r) not in taken for c in range(col, col + cols) for r in range(row, row + rows))


def height_of(placements: Sequence[Placement]) -> int:
    """Rows the packed grid takes."""
    return max((p.row + p.rows for p in placements), default=0)


def moved(order: Sequence[str], item: str, to: int) -> list[str]:
    """``order`` with ``item`` at index ``to`` (clamped to the list)."""
    rest = [i for i in order if i != item]
    to = max(0, min(to, len(rest)))
    return [*rest[:to], item, *rest[to:]]


def span_from_pixels(width: float, height: float, column_width: float) -> Span:
    """The span closest to a size in pixels (what a drag on the resize grip asks for)."""
    cols = round((width + GAP) / (column_width + GAP))
    rows = round((height + GAP) / (ROW_HEIGHT + GAP))
    return Span(max(1, cols), max(1, rows))
