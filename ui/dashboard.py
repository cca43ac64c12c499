"""The dashboard: a workspace's widgets in a grid that fits the window and scrolls only down.

As many columns as fit (``ui.dashboard_layout``); each widget spans some columns and rows and
is placed, in the user's order, at the first free spot. The user moves a widget by dragging its
handle onto another widget's place, resizes it by dragging its corner grip, or does either from
the keyboard (the card's Layout menu and shortcuts). Each change is announced with
``layoutChanged`` (the order with every span) for the window to keep; the dashboard itself
stores nothing. When a widget's call fails, its card shows Helm's error strip (``heard``).

Frames are made by a ``ViewFactory`` (``ui.frame_spec``); when a widget's settings change, its
frame is made again with the new values.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from broker.activity import ActivityRecord
from ui.dashboard_card import STYLE, WidgetCard
from ui.dashboard_layout import (
    GAP,
    MAX_COLS,
    MAX_ROWS,
    ROW_HEIGHT,
    Hint,
    Placement,
    Span,
    columns_for,
    height_of,
    hint_of,
    moved,
    pack,
    span_from_pixels,
)
from ui.frame_spec import Disposer, FrameSpec, ViewFactory, placeholder_view
from ui.qt import QFrame, QPoint, QRect, QResizeEvent, QScrollArea, Qt, QWidget, Signal
from ui.text import plain_label
from ui.widgets.settings_form import defaults

__all__ = ["Dashboard", "Disposer", "FrameSpec", "ViewFactory", "WidgetCard", "placeholder_view"]

ROUNDING = 0.05
"""Of a column: how far past a whole number of columns a reported width may be and still fit
them (a card's pixels are rounded; the app reports its frame's width rounded up)."""
EMPTY_DASHBOARD = (
    "No widgets on this dashboard yet. Install an extension (Get started → Install an "
    "extension…, or Ctrl+K), or open and approve one listed on the left."
)
"""What the dashboard says while it has no widget: what to do next."""

Saved = Sequence[tuple[str, Span]]
"""The layout the window keeps: widget ids in order, each with its span."""


class _Canvas(QWidget):
    """The scrolled area's content; lays the cards out whenever its width changes."""

    def __init__(self, on_resize: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._on_resize = on_resize

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._on_resize()


class Dashboard(QScrollArea):
    """The widgets of one workspace in a responsive grid."""

    layoutChanged = Signal(object)
    """The new layout (``Saved``) after the user moved or resized a widget."""

    def __init__(self, factory: ViewFactory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.factory = factory
        self.dispose = Disposer()
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAccessibleName("Dashboard")
        self.setStyleSheet(STYLE)
        self.cards: list[WidgetCard] = []
        self.spans: dict[str, Span] = {}
        self.hints: dict[str, Hint] = {}
        self._placed: set[str] = set()
        """Widgets the user moved or sized in this session (their content no longer sizes them)."""
        self.placements: list[Placement] = []
        self.columns = 1
        self._canvas = _Canvas(self.relayout, self)
        self.empty = plain_label(EMPTY_DASHBOARD, self._canvas)
        self.empty.setGeometry(GAP, GAP, 600, 80)
        self.drop_marker = QFrame(self._canvas)
        self.drop_marker.setObjectName("dropMarker")
        self.drop_marker.setFrameShape(QFrame.Shape.Box)
        self.drop_marker.setLineWidth(2)
        self.drop_marker.hide()
        self._resize_from: Span | None = None
        self._resizing_card: WidgetCard | None = None
        self.setWidget(self._canvas)

    # -- showing ---------------------------------------------------------------------------
    def show_widgets(
        self, frames: list[FrameSpec], save: Callable[[str, dict[str, Any]], None], saved: Saved = ()
    ) -> None:
        """Show ``frames``, in the ``saved`` order and spans (new widgets last, at their hint)."""
        for card in self.cards:
            card.col.removeWidget(card.view)
            card.view.setParent(None)
            self.dispose(card.view)
            card.deleteLater()
        self.cards, self.spans, self.hints, self._placed = [], {}, {}, set()
        known = dict(saved)
        rank = {wid: i for i, (wid, _span) in enumerate(saved)}
        frames = sorted(frames, key=lambda f: rank.get(f.manifest.id, len(rank)))
        for frame in frames:
            ext_id = frame.manifest.id
            values = {**defaults(frame.manifest.settings_form), **frame.settings}
            frame = FrameSpec(frame.workspace, frame.manifest, frame.instance, values)
            card = WidgetCard(frame, self.factory, _saver(save, ext_id), self.dispose, self._canvas)
            self._wire(card)
            if ext_id not in known:  # placed by no one yet: an app may say how tall it is
                card.contentSized.connect(lambda w, h, c=card: self._content_sized(c, w, h))
            hint = self.hints[ext_id] = hint_of(frame.manifest.raw)
            self.spans[ext_id] = known.get(ext_id, hint.start).clamped(hint.minimum)
            self.cards.append(card)
            card.show()
        self.empty.setVisible(not frames)
        self.relayout()

    def _wire(self, card: WidgetCard) -> None:
        card.layoutAsked.connect(lambda key, c=card: self._layout_asked(c, key))
        menu = card.layout_button.menu()
        if menu is not None:
            menu.aboutToShow.connect(lambda c=card: self._offer_layout(c))
        card.handle.dragging.connect(lambda at, c=card: self._dragging(c, at))
        card.handle.dropped.connect(lambda at, c=card: self._dropped(c, at))
        card.grip.resizing.connect(lambda by, c=card: self._resizing(c, by))
        card.grip.resized.connect(self._resized)

    def relayout(self) -> None:
        """Place every card for the current width: columns that fit, no sideways scrolling."""
        self.columns = columns_for(self._canvas.width())
        column_width = self.column_width()
        order = [(c.frame.manifest.id, self.spans[c.frame.manifest.id]) for c in self.cards]
        self.placements = pack(order, self.columns)
        for card, p in zip(self.cards, self.placements, strict=True):
            card.setGeometry(self._rect(p, column_width))
        rows = height_of(self.placements)
        self._canvas.setMinimumHeight(rows * (ROW_HEIGHT + GAP) + GAP if rows else 60)
        self._tab_order()

    def _tab_order(self) -> None:
        """Tab goes through the widgets in the order the grid shows them."""
        parts = [(c.handle, c.layout_button, c.settings_button, c.strip.retry, c.view) for c in self.cards]
        # Qt links only widgets that take the focus (a placeholder frame does not).
        chain = [w for part in parts for w in part if w.focusPolicy() != Qt.FocusPolicy.NoFocus]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    def _rect(self, p: Placement, column_width: float) -> QRect:
        x = GAP + round(p.col * (column_width + GAP))
        width = round(p.cols * column_width + (p.cols - 1) * GAP)
        y = GAP + p.row * (ROW_HEIGHT + GAP)
        return QRect(x, y, width, p.rows * ROW_HEIGHT + (p.rows - 1) * GAP)

    def column_width(self) -> float:
        return (self._canvas.width() - GAP * (self.columns + 1)) / self.columns

    def order(self) -> list[str]:
        return [c.frame.manifest.id for c in self.cards]

    def saved(self) -> list[tuple[str, Span]]:
        return [(ext_id, self.spans[ext_id]) for ext_id in self.order()]

    # -- changing --------------------------------------------------------------------------
    def move_widget(self, ext_id: str, to: int) -> None:
        """Put widget ``ext_id`` at position ``to`` in the order."""
        order = moved(self.order(), ext_id, to)
        if order == self.order():
            return
        by_id = {c.frame.manifest.id: c for c in self.cards}
        self.cards = [by_id[i] for i in order]
        self._changed(by_id[ext_id])

    def resize_widget(self, ext_id: str, span: Span) -> None:
        """Give widget ``ext_id`` a new span (kept within its minimum and the grid's limits; a
        span wider than the window is kept, and drawn as wide as the window)."""
        span = span.clamped(self.hints[ext_id].minimum)
        if span == self.spans[ext_id]:
            return
        self.spans[ext_id] = span
        self.relayout()

    def _content_sized(self, card: WidgetCard, width: int, height: int) -> None:
        """A widget nobody has sized grows (never shrinks) to the width and height its content
        reports, at most the columns shown (and ``MAX_COLS``) and ``MAX_ROWS``; the user's own
        sizing always wins, and this is not saved. (An app that reports the width it has asks
        for exactly the columns it has: the fraction of a pixel rounding leaves is not a column.)"""
        ext_id = card.frame.manifest.id
        if ext_id not in self.spans or ext_id in self._placed or card is self._resizing_card:
            return
        span = self.spans[ext_id]
        rows = min(MAX_ROWS, math.ceil((height + GAP) / (ROW_HEIGHT + GAP))) if height > 0 else 0
        wide = (width + GAP) / (self.column_width() + GAP) - ROUNDING if width > 0 else 0
        cols = min(MAX_COLS, self.columns, math.ceil(wide))
        grown = Span(max(span.cols, cols), max(span.rows, rows))
        if grown != span:
            self.resize_widget(ext_id, grown)

    def _changed(self, card: WidgetCard) -> None:
        self._placed.add(card.frame.manifest.id)  # the user's choice, which content never undoes
        self.relayout()
        self.ensureWidgetVisible(card)
        self.layoutChanged.emit(self.saved())

    def _layout_asked(self, card: WidgetCard, key: str) -> None:
        ext_id = card.frame.manifest.id
        index, span = self.order().index(ext_id), self.spans[ext_id]
        if key in ("earlier", "later"):
            self.move_widget(ext_id, index + (1 if key == "later" else -1))
            card.handle.setFocus()
            return
        grow = {"narrower": (-1, 0), "wider": (1, 0), "shorter": (0, -1), "taller": (0, 1)}
        cols, rows = grow.get(key, (0, 0))
        shown = min(span.cols, self.columns)  # the keys change what the user sees
        new = self.hints[ext_id].start if key == "reset" else Span(shown + cols, span.rows + rows)
        self.resize_widget(ext_id, Span(min(new.cols, self.columns, MAX_COLS), new.rows))
        if self.spans[ext_id] != span:
            self._changed(card)

    def _offer_layout(self, card: WidgetCard) -> None:
        """Enable what the Layout menu can do for ``card`` now (first cannot move earlier…)."""
        ext_id = card.frame.manifest.id
        index, span, least = self.order().index(ext_id), self.spans[ext_id], self.hints[ext_id].minimum
        shown = min(span.cols, self.columns)
        possible = {
            "earlier": index > 0, "later": index < len(self.cards) - 1,
            "narrower": shown > least.cols, "wider": shown < min(self.columns, MAX_COLS),
            "shorter": span.rows > least.rows, "taller": span.rows < MAX_ROWS,
            "reset": span != self.hints[ext_id].start,
        }  # fmt: skip
        for key, action in card.layout_actions.items():
            action.setEnabled(possible[key])

    # -- the mouse -------------------------------------------------------------------------
    def _dragging(self, card: WidgetCard, at: QPoint) -> None:
        target = self._card_at(at)
        if target is None or target is card:
            self.drop_marker.hide()
            return
        self.drop_marker.setGeometry(target.geometry())
        self.drop_marker.show()
        self.drop_marker.raise_()

    def _dropped(self, card: WidgetCard, at: QPoint) -> None:
        self.drop_marker.hide()
        target = self._card_at(at)
        if target is not None and target is not card:
            self.move_widget(card.frame.manifest.id, self.cards.index(target))

    def _card_at(self, at: QPoint) -> WidgetCard | None:
        local = self._canvas.mapFromGlobal(at)
        return next((c for c in self.cards if c.geometry().contains(local)), None)

    def _resizing(self, card: WidgetCard, by: QPoint) -> None:
        ext_id = card.frame.manifest.id
        if self._resize_from is None:
            self._resize_from = self.spans[ext_id]
            self._resizing_card = card
        start = self._rect(
            Placement(ext_id, 0, 0, self._resize_from.cols, self._resize_from.rows), self.column_width()
        )
        self.resize_widget(
            ext_id, span_from_pixels(start.width() + by.x(), start.height() + by.y(), self.column_width())
        )

    def _resized(self) -> None:
        card, before = self._resizing_card, self._resize_from
        self._resizing_card = self._resize_from = None
        if card is not None and before is not None and self.spans[card.frame.manifest.id] != before:
            self._changed(card)

    # -- what the widgets' calls did -------------------------------------------------------
    def heard(self, records: Iterable[ActivityRecord]) -> None:
        """Each widget's connection health after its calls (the last call of a connection counts)."""
        last: dict[tuple[str, str, str, str], ActivityRecord] = {}
        for record in records:
            last.pop(key := (record.workspace, record.extension, record.instance, record.connection), None)
            last[key] = record  # in the order the connections last answered
        cards = {(c.frame.workspace, c.frame.manifest.id, c.frame.instance): c for c in self.cards}
        for (workspace, extension, instance, connection), record in last.items():
            card = cards.get((workspace, extension, instance))
            if card is not None:
                card.heard(connection, record.outcome, record.message)


def _saver(save: Callable[[str, dict[str, Any]], None], ext_id: str) -> Callable[[dict[str, Any]], None]:
    return lambda values: save(ext_id, values)
