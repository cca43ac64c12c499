"""The write confirmation dialog, one per kind, and the ``Confirmer`` that shows it.

The dialog shows who wants to do what, where, and the exact request — every string of it from
the broker's ``WriteSummary`` as plain text (``ui.text``). Its title and sentence are the
kind's (``KindSpec.confirm``). Cancel has the focus and is the
default; Esc cancels; the input guard drops a click already on its way. The write's token has
a deadline: when it passes with the dialog still open, the dialog says so and answers
``EXPIRED`` (the call ends with ``confirmation_required``; nothing was sent).

``DialogConfirmer`` is what the broker's write pipeline awaits, for every requester: it shows
one dialog at a time per requester (``ui.dialogs.turns``), queueing the rest, and awaits the
dialog's answer as a future — no ``exec()``, no nested loop. A question that arrives while the
user is elsewhere is shown through ``ui.attention``: the window comes up and the desktop is
told, and the keyboard focus is not taken. The dialog names who asks by the requester's label:
its name with its id beside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from broker.kinds import KINDS
from broker.kinds.spec import ConfirmText
from broker.summary import Decision, WriteSummary
from ui.dialogs.base import GUARD_MS, QuestionDialog
from ui.dialogs.turns import EXPIRY_MARGIN_SECONDS, Turns
from ui.qt import (
    QBrush,
    QColor,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTextCharFormat,
    QTextCursor,
    QTimer,
    QVBoxLayout,
    QWidget,
)
from ui.text import monospace, plain_box, plain_heading, plain_label, value_widget, visible
from ui.theme import Theme, set_tone
from ui.theme_data import SPACE, Scheme

EXPIRED_TEXT = (
    "This request expired before you answered. Nothing was sent; the extension was told "
    "that the write needs a new confirmation."
)

_DIFF_COLOURS = {
    Scheme.LIGHT: {"+": ("#0a5d1a", "#e6f6e6"), "-": ("#8a1111", "#fbe9e9"), "@": ("#1f4e8c", "#eef3fb")},
    Scheme.DARK: {"+": ("#7ddc8b", "#1d3324"), "-": ("#ff8a80", "#3d1f1f"), "@": ("#8ab4ff", "#1e2a3d")},
}
"""(text, background) of added, removed and position lines, legible in each scheme."""


def kind_dialog(summary: WriteSummary) -> ConfirmText:
    """The kind's dialog text; a write that is no kind's keeps its own title."""
    spec = KINDS.get(summary.kind)
    if spec is not None:
        return spec.confirm
    return ConfirmText(summary.title, "wants to write", "Request")


@dataclass(frozen=True)
class Words:
    """What the dialog says around the summary's own fields."""

    title: str
    heading: str
    about_request: str
    nothing_unless: str


def words_of(summary: WriteSummary) -> Words:
    spec = kind_dialog(summary)
    # The broker titles each summary by its kind (the contract's titles); a summary of
    # another question (turning on DB explorer writes) keeps its own title and sentence.
    title = summary.title or spec.title
    own = title == spec.title
    wants = spec.wants if own else f"asks: {title}"
    about = f"{spec.request_label} — exactly as Helm will send it" if own else "Details"
    return Words(title, f"{summary.who} {wants}.", about, "Nothing is sent unless you click Confirm.")


class ConfirmDialog(QuestionDialog):
    """Asks the user to confirm one write, exactly as ``summary`` describes it."""

    confirmation = True

    def __init__(
        self,
        summary: WriteSummary,
        parent: QWidget | None = None,
        *,
        remaining: float | None = None,
        guard_ms: int = GUARD_MS,
    ) -> None:
        words = words_of(summary)
        super().__init__(words.title, "Confirm", parent, guard_ms=guard_ms)
        self.summary = summary
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)
        layout.setSpacing(SPACE[1])
        self._describe(layout, words.heading)
        self.request_box: QPlainTextEdit | None = None
        if summary.request:
            layout.addWidget(QLabel(words.about_request, self))
            self.request_box = request_view(summary, self, words.about_request)
            layout.addWidget(self.request_box)
        self.diff_box: QPlainTextEdit | None = None
        if summary.diff:
            layout.addWidget(QLabel("Line changes", self))
            self.diff_box = diff_view(summary.diff, self)
            self.diff_box.setAccessibleName("Line changes")
            layout.addWidget(self.diff_box, 1)
        if self.diff_box is None:  # spare height below the request, never between its parts
            layout.addStretch(1)
        self.notice = plain_label("", self)
        self.notice.setObjectName("notice")
        set_tone(self.notice, "write")
        self.notice.hide()
        layout.addWidget(self.notice)
        layout.addWidget(plain_label(words.nothing_unless, self))
        layout.addLayout(self.buttons)
        self.expiry = QTimer(self)
        self.expiry.setSingleShot(True)
        self.expiry.timeout.connect(self.expire)
        if remaining is not None:
            self.expiry.start(max(int(remaining * 1000), 0))
        self.focus_cancel()

    def _describe(self, layout: QVBoxLayout, sentence: str) -> None:
        """The bold sentence saying what the extension wants, then the summary's fields."""
        layout.addWidget(plain_heading(sentence, self))
        layout.addSpacing(SPACE[0])
        layout.addLayout(fields_form(form_fields(self.summary), self))
        layout.addSpacing(SPACE[1])  # a group's gap between where and what

    def expire(self) -> None:
        """The token ran out: answer EXPIRED and leave the dialog open to say so."""
        if self.decision is not None:
            return
        self.expiry.stop()
        self.decide(Decision.EXPIRED)
        self.accept_button.hide()
        self.cancel_button.setText("Close")
        self.notice.setText(EXPIRED_TEXT)
        self.notice.show()


def form_fields(summary: WriteSummary) -> tuple[tuple[str, str], ...]:
    """The fields shown above the request: the workspace (unless a field names it), then the
    kind's fields less those its request box shows in full (the SQL, the URL, the arguments),
    so the dialog shows the request once."""
    shown_in = kind_dialog(summary).in_request
    request = summary.request
    workspace = (
        (("Workspace", summary.workspace),)
        if summary.workspace and not any(label == "Workspace" for label, _v in summary.fields)
        else ()
    )
    return workspace + tuple(
        (label, value)
        for label, value in summary.fields
        if not (label in shown_in and value and value in request)
    )


def fields_form(rows: tuple[tuple[str, str], ...], parent: QWidget) -> QFormLayout:
    """Each label beside its value, the value as wide as the form, so that a label wraps only
    where the dialog ends. The value's size policy is changed, not replaced: a replaced one
    loses a wrapping label's height for width, and the label is then given the height of the
    lines its narrow size hint guesses, its one line centred in them below its label's."""
    form = QFormLayout()
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
    for label, value in rows:
        shown = value_widget(value, parent, name=visible(label))
        policy = shown.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Expanding)
        shown.setSizePolicy(policy)
        form.addRow(visible(label), shown)
    return form


def request_view(summary: WriteSummary, parent: QWidget, name: str) -> QPlainTextEdit:
    """The exact request in a scrolling box; a kind whose request leads with its URL keeps
    each line whole and scrolls sideways instead of breaking it."""
    box = plain_box(summary.request, parent, max_lines=10, name=name)
    if not kind_dialog(summary).wrap_request:
        box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        lines = min(max(summary.request.count("\n") + 1, 2), 10)
        bar = box.horizontalScrollBar().sizeHint().height()
        box.setMaximumHeight(box.fontMetrics().lineSpacing() * (lines + 1) + 12 + bar)
    return box


def diff_view(diff: str, parent: QWidget | None = None) -> QPlainTextEdit:
    """A read-only box with the unified diff, added lines green and removed lines red."""
    box = QPlainTextEdit(parent)
    box.setReadOnly(True)
    box.setFont(monospace())
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    cursor = box.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    palette = _DIFF_COLOURS[Theme.of().look.scheme]
    for i, line in enumerate(lines):
        fmt = QTextCharFormat()
        colours = None if line.startswith(("+++", "---")) else palette.get(line[:1])
        if colours is not None:
            fmt.setForeground(QBrush(QColor(colours[0])))
            fmt.setBackground(QBrush(QColor(colours[1])))
        # insertText with a format inserts characters, never markup.
        cursor.insertText(visible(line) + ("\n" if i < len(lines) - 1 else ""), fmt)
    box.moveCursor(QTextCursor.MoveOperation.Start)
    box.setMinimumHeight(160)
    return box


class ConfirmDialogFactory(Protocol):
    def __call__(
        self, summary: WriteSummary, parent: QWidget | None, *, remaining: float | None
    ) -> ConfirmDialog: ...


class DialogConfirmer(Turns[ConfirmDialog]):
    """The desktop's one ``Confirmer``: every write Helm asks about (an extension's, an app's,
    an agent's, the DB explorer's) is shown by it, one dialog at a time per requester."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        factory: ConfirmDialogFactory = ConfirmDialog,
        margin: float = EXPIRY_MARGIN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(parent, margin=margin, clock=clock)
        self._factory = factory

    async def __call__(self, summary: WriteSummary) -> Decision:
        received = self._clock()
        async with self.turn(summary.requester):
            remaining = self.remaining(summary.expires_in, received)
            if remaining <= 0:
                return Decision.EXPIRED  # its turn came too late; the token is as good as gone
            return await self._ask(summary, remaining)

    async def _ask(self, summary: WriteSummary, remaining: float) -> Decision:
        dialog = self._factory(summary, self._parent, remaining=remaining)
        wants = f"{summary.who} {kind_dialog(summary).wants}. Confirm or cancel it in Helm."
        # The dialog expires itself; the extra second only bounds the wait if it did not.
        decided = self.show(dialog, remaining + 1.0, summary.title or kind_dialog(summary).title, wants)
        try:
            (decision,) = await decided
            return Decision(decision)
        except TimeoutError:
            dialog.expire()
            return Decision.EXPIRED
        finally:
            self.dismiss(dialog, dialog.decision is Decision.EXPIRED)
