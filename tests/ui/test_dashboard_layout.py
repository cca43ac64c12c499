"""The grid as data: columns that fit, spans from the manifest's hint, first-fit packing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ui.dashboard_layout import (
    COLUMN_MIN,
    GAP,
    MAX_COLS,
    MAX_ROWS,
    Hint,
    Span,
    columns_for,
    hint_of,
    moved,
    pack,
    span_from_pixels,
)


def test_as_many_columns_fit_as_the_width_allows_and_never_fewer_than_one() -> None:
    assert columns_for(100) == 1
    assert columns_for(2 * COLUMN_MIN + 3 * GAP) == 2
    assert columns_for(2 * COLUMN_MIN + 3 * GAP - 1) == 1


def test_hints_give_a_start_and_a_minimum() -> None:
    assert hint_of({}) == Hint(Span(1, 3), Span(1, 2))
    assert hint_of({"size": "large"}) == Hint(Span(2, 5), Span(1, 2))
    minimum = hint_of({"size": {"minWidth": 500, "minHeight": 350}})
    assert minimum == Hint(Span(2, 4), Span(2, 4))
    assert hint_of({"size": {"minHeight": 120}}).minimum == Span(1, 2)


def test_packing_fills_gaps_from_the_top_left_in_order() -> None:
    placed = pack([("a", Span(2, 2)), ("b", Span(1, 3)), ("c", Span(1, 1)), ("d", Span(2, 1))], 3)
    assert [(p.id, p.col, p.row, p.cols) for p in placed] == [
        ("a", 0, 0, 2), ("b", 2, 0, 1), ("c", 0, 2, 1), ("d", 0, 3, 2),
    ]  # fmt: skip


def test_a_span_wider_than_the_grid_is_drawn_as_wide_as_the_grid() -> None:
    assert [(p.col, p.cols) for p in pack([("a", Span(4, 2))], 2)] == [(0, 2)]


spans = st.builds(Span, st.integers(1, MAX_COLS), st.integers(1, MAX_ROWS))


@given(st.lists(spans, max_size=12), st.integers(1, 6))
def test_packed_widgets_never_overlap_and_stay_inside_the_columns(items: list[Span], columns: int) -> None:
    placed = pack([(str(i), s) for i, s in enumerate(items)], columns)
    cells = [
        (c, r) for p in placed for c in range(p.col, p.col + p.cols) for r in range(p.row, p.row + p.rows)
    ]
    assert len(cells) == len(set(cells))
    assert all(p.col >= 0 and p.col + p.cols <= columns for p in placed)


def test_moving_and_resizing_by_pixels() -> None:
    assert moved(["a", "b", "c"], "a", 2) == ["b", "c", "a"]
    assert moved(["a", "b", "c"], "c", -5) == ["c", "a", "b"]
    assert span_from_pixels(610, 320, 300) == Span(2, 3)
