"""Plugin review: everything an extension may do, grouped by connection, before it may do it.

Shown when an extension is installed and whenever the approved part of its manifest changed
(the approval's digest no longer matches). Reads and writes are listed apart, writes marked,
each kind's warnings (the MCP one) shown with their connection; what changed in pinned MCP
tools and when tools were (or will be) pinned at first contact; all text is plain. Approve
answers ``CONFIRMED``, Cancel (the default) or Esc ``DECLINED``. ``review_dialog`` builds it
from a ``broker.extensions.Reviewed`` snapshot, which the caller then hands to ``approve``.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from broker.extensions import Reviewed
from broker.kinds.base import ConnectionReview, ReviewItem
from broker.manifest import Review
from broker.orchestrate.spec import Orchestrate
from ui.dialogs.base import GUARD_MS, QuestionDialog
from ui.qt import QFormLayout, QFrame, QGridLayout, QGroupBox, QLabel, QScrollArea, QVBoxLayout, QWidget
from ui.text import elide, plain_label, value_widget
from ui.theme import set_tone


class ReviewReason(StrEnum):
    INSTALL = "install"
    CHANGED = "changed"
    UPDATE = "update"


REASON_TEXT = {
    ReviewReason.INSTALL: "Review what this extension may do before you approve it.",
    ReviewReason.CHANGED: (
        "This extension's connections changed since you approved it. Its calls are refused "
        "until you review and approve it again."
    ),
    ReviewReason.UPDATE: (
        "An update from its catalogue. The version you approved keeps running until you approve "
        "this one; you can step back to it afterwards."
    ),
}


class ReviewDialog(QuestionDialog):
    """Approve or cancel one extension's review."""

    def __init__(
        self,
        review: Review,
        reason: ReviewReason = ReviewReason.INSTALL,
        parent: QWidget | None = None,
        *,
        changes: Sequence[str] = (),
        pinning: Sequence[str] = (),
        update: Sequence[str] = (),
        guard_ms: int = GUARD_MS,
    ) -> None:
        # Named by its id beside its name, as every dialog names who asks (a name alone can pose).
        title = f"Review {elide(review.name, 80)} ({elide(review.id, 80)})"
        approve = "Approve update" if reason is ReviewReason.UPDATE else "Approve"
        super().__init__(title, approve, parent, guard_ms=guard_ms)
        self.review = review
        self.setMinimumSize(620, 480)
        layout = QVBoxLayout(self)
        heading = plain_label(f"{review.name} {review.version} ({review.id})", self)
        font = heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        heading.setFont(font)
        layout.addWidget(heading)
        layout.addWidget(plain_label(REASON_TEXT[reason], self))
        may_write = (
            "May write: yes — every write asks for your confirmation"
            if review.may_write
            else "May write: no — read-only"
        )
        layout.addWidget(plain_label(may_write, self))
        # What kinds pinned at approval and the server now describes differently (MCP tools),
        # and tools pinned at first contact rather than at approval, or left to be pinned then.
        for name, title, lines in (
            ("update", "Compared with what you approved:", update),
            ("pin-changes", "Changed since your last approval:", changes),
            ("pinning", "Tool pinning:", pinning),
        ):
            if lines:
                layout.addWidget(_notes(name, title, lines, self))
        layout.addWidget(_what_it_may_do(review, self), 1)
        layout.addLayout(self.buttons)
        self.focus_cancel()


def _what_it_may_do(review: Review, parent: QWidget) -> QScrollArea:
    """Each connection's reads and writes, then every write together, scrolling."""
    scroll = QScrollArea(parent)
    scroll.setAccessibleName("What it may do")
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    inner = QWidget(scroll)
    body = QVBoxLayout(inner)
    if review.orchestrate is not None:
        body.addWidget(build_box(review.orchestrate, inner))
    for conn in review.connections:
        body.addWidget(connection_box(conn, inner))
    writes = [(c.id, w) for c in review.connections for w in c.writes]
    if writes:
        body.addWidget(writes_box(writes, inner))
    body.addStretch(1)
    scroll.setWidget(inner)
    return scroll


def _notes(name: str, heading: str, lines: Sequence[str], parent: QWidget) -> QLabel:
    label = plain_label(heading + "\n" + "\n".join(f"• {line}" for line in lines), parent)
    label.setObjectName(name)
    set_tone(label, "warning")
    return label


def review_dialog(
    reviewed: Reviewed,
    parent: QWidget | None = None,
    *,
    update: Sequence[str] = (),
    guard_ms: int = GUARD_MS,
) -> ReviewDialog:
    """The dialog for a review snapshot; pass the same ``reviewed`` to ``extensions.approve``.
    ``update``: for a catalogue update, what it adds to what was approved, in words (at least
    "no new capabilities"), shown above everything it may do."""
    reason = ReviewReason.CHANGED if reviewed.approved_before else ReviewReason.INSTALL
    if reviewed.update is not None:
        reason = ReviewReason.UPDATE
    return ReviewDialog(
        reviewed.review,
        reason,
        parent,
        changes=reviewed.changes,
        pinning=reviewed.pinning,
        update=update,
        guard_ms=guard_ms,
    )


def connection_box(conn: ConnectionReview, parent: QWidget) -> QGroupBox:
    box = QGroupBox(elide(f"[{conn.id}] {conn.kind} — {conn.target}", 120), parent)
    box.setObjectName(f"connection:{conn.id}")
    grid = QGridLayout(box)
    grid.setColumnStretch(1, 2)
    grid.setColumnStretch(2, 3)
    row = 0
    for heading, items in (("Reads", conn.reads), ("Writes", conn.writes)):
        if not items:
            continue
        title = QLabel(heading, box)
        if heading == "Writes":
            set_tone(title, "write")
        grid.addWidget(title, row, 0, 1, 3)
        row += 1
        for item in items:
            row = _item_row(grid, row, item, box)
    for warning in conn.warnings:
        note = plain_label("⚠ " + warning, box)
        note.setObjectName("warning")
        set_tone(note, "warning")
        grid.addWidget(note, row, 0, 1, 3)
        row += 1
    return box


def _item_row(grid: QGridLayout, row: int, item: ReviewItem, parent: QWidget) -> int:
    tag = QLabel("WRITE" if item.write else "read", parent)
    if item.write:
        set_tone(tag, "write")
    grid.addWidget(tag, row, 0)
    grid.addWidget(plain_label(item.label, parent), row, 1)
    if item.detail:
        grid.addWidget(value_widget(item.detail, parent, name=item.label), row, 2)
    return row + 1


def writes_box(writes: list[tuple[str, ReviewItem]], parent: QWidget) -> QGroupBox:
    box = QGroupBox("Writes — each one asks for your confirmation", parent)
    box.setObjectName("writes")
    set_tone(box, "write")
    col = QVBoxLayout(box)
    for conn_id, item in writes:
        line = plain_label(f"[{conn_id}] {item.label}", box)
        line.setStyleSheet("font-weight: normal;")
        col.addWidget(line)
    return box


def build_box(spec: Orchestrate, parent: QWidget) -> QGroupBox:
    """The build the tool may start: its prompt template, where it runs, whether it may write."""
    box = QGroupBox("Builds — a coding agent runs this prompt when you click Start", parent)
    box.setObjectName("orchestrate")
    set_tone(box, "write")
    form = QFormLayout(box)
    for label, value in spec.review_lines():
        form.addRow(label, value_widget(value, box, name=label))
    return box
