"""The Start build dialog, and the ``BuildAsker`` that shows it.

It shows who wants a build, the agent that runs it, where, and the exact prompt the agent will
get (``broker.orchestrate.builds.BuildQuestion``), every string as plain text. When the tool
offers a write beside the build, the dialog is that write's own confirmation: the write is
shown beside the build exactly as the write's confirmation dialog shows it (its fields, the
exact request, the line diff), and the answers are Cancel, Start build, the write alone (the
tool's label, "Move") and "Move and start build". Cancel has the focus and is the default; Esc
and closing the window cancel; the input guard drops a click already on its way. With a write,
the dialog ends itself before the write's token runs out (``EXPIRED``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from broker.orchestrate.builds import BuildAnswer, BuildQuestion
from broker.summary import Decision
from ui.dialogs.base import GUARD_MS, QuestionDialog
from ui.dialogs.confirm import diff_view, fields_form, form_fields, request_view, words_of
from ui.dialogs.turns import EXPIRY_MARGIN_SECONDS, Turns
from ui.qt import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QObject,
    QPushButton,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import plain_box, plain_heading, plain_label, visible
from ui.theme import set_tone
from ui.theme_data import SPACE

TITLE = "Start build"
PROMPT_LABEL = "Prompt — exactly as the agent will get it"
NOTHING_UNLESS = "Nothing starts unless you click Start build."
NOTHING_UNLESS_WRITE = "Nothing starts and nothing is sent unless you click one of the buttons on the right."
EXPIRED_TEXT = "This request expired before you answered. Nothing was started and nothing was sent."


class BuildDialog(QuestionDialog):
    """Asks whether to start one build (and make the write offered beside it)."""

    confirmation = True

    def __init__(
        self,
        question: BuildQuestion,
        parent: QWidget | None = None,
        *,
        remaining: float | None = None,
        guard_ms: int = GUARD_MS,
    ) -> None:
        super().__init__(TITLE, "Start build", parent, guard_ms=guard_ms)
        self.question = question
        self.answer: BuildAnswer | None = None
        self._chosen = BuildAnswer.BUILD
        self.setMinimumWidth(980 if question.write is not None else 600)
        layout = QVBoxLayout(self)
        layout.setSpacing(SPACE[1])
        plan = question.plan
        layout.addWidget(plain_heading(f"{plan.requester.label} wants to start a build.", self))
        columns = QHBoxLayout()
        columns.setSpacing(SPACE[3])
        columns.addLayout(self._build_column(), 1)
        self.write_button: QPushButton | None = None
        self.both_button: QPushButton | None = None
        if question.write is not None:
            columns.addLayout(self._write_column(), 1)
            self.write_button = self._answer_button(question.label, BuildAnswer.WRITE)
            self.both_button = self._answer_button(question.both_label, BuildAnswer.BOTH)
            self.buttons.addWidget(self.write_button)
            self.buttons.addWidget(self.both_button)
        layout.addLayout(columns, 1)
        self.notice = plain_label("", self)
        set_tone(self.notice, "write")
        self.notice.hide()
        layout.addWidget(self.notice)
        nothing = NOTHING_UNLESS if question.write is None else NOTHING_UNLESS_WRITE
        layout.addWidget(plain_label(nothing, self))
        layout.addLayout(self.buttons)
        self.expiry = QTimer(self)
        self.expiry.setSingleShot(True)
        self.expiry.timeout.connect(self.expire)
        if remaining is not None:
            self.expiry.start(max(int(remaining * 1000), 0))
        self.accept_button.clicked.disconnect()
        self.accept_button.clicked.connect(lambda: self.choose(BuildAnswer.BUILD))
        self.focus_cancel()

    def _build_column(self) -> QVBoxLayout:
        col = QVBoxLayout()
        if self.question.write is not None:  # beside the write: say which is which
            col.addWidget(_title("The build", self))
        col.addLayout(fields_form(self.question.plan.fields(), self))
        col.addWidget(QLabel(PROMPT_LABEL, self))
        self.prompt_box = plain_box(self.question.plan.prompt, self, max_lines=14, name=PROMPT_LABEL)
        col.addWidget(self.prompt_box)
        col.addStretch(1)
        return col

    def _write_column(self) -> QVBoxLayout:
        summary = self.question.write
        assert summary is not None
        words = words_of(summary)
        col = QVBoxLayout()
        col.addWidget(_title(f"The write: {words.title}", self))
        col.addLayout(fields_form(form_fields(summary), self))
        self.request_box = None
        if summary.request:
            col.addWidget(QLabel(words.about_request, self))
            self.request_box = request_view(summary, self, words.about_request)
            col.addWidget(self.request_box)
        self.diff_box = None
        if summary.diff:
            col.addWidget(QLabel("Line changes", self))
            self.diff_box = diff_view(summary.diff, self)
            self.diff_box.setAccessibleName("Line changes")
            col.addWidget(self.diff_box, 1)
        else:
            col.addStretch(1)
        return col

    def _answer_button(self, text: str, answer: BuildAnswer) -> QPushButton:
        button = QPushButton(visible(text).replace("&", "&&"), self)  # a tool's "&" is no shortcut
        button.setAutoDefault(False)
        button.setDefault(False)
        button.clicked.connect(lambda: self.choose(answer))
        return button

    def choose(self, answer: BuildAnswer) -> None:
        """One of the answers that act (Start build, the write, both)."""
        self._chosen = answer
        self.accept()

    def _finished(self, result: int) -> None:
        if self.answer is None:
            accepted = result == QDialog.DialogCode.Accepted.value
            self.answer = self._chosen if accepted else BuildAnswer.CANCEL
        super()._finished(result)

    def expire(self) -> None:
        """The write's token ran out: answer EXPIRED and stay open to say so."""
        if self.decision is not None:
            return
        self.expiry.stop()
        self.answer = BuildAnswer.EXPIRED
        self.decide(Decision.EXPIRED)
        for button in (self.accept_button, self.write_button, self.both_button):
            if button is not None:
                button.hide()
        self.cancel_button.setText("Close")
        self.notice.setText(EXPIRED_TEXT)
        self.notice.show()


def _title(text: str, parent: QWidget) -> QLabel:
    """A column's title: what the user decides about, in bold."""
    label = plain_label(text, parent)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


class DialogBuildAsker(Turns[BuildDialog], QObject):
    """The window's ``BuildAsker``: one question at a time per requester, as write dialogs are."""

    opened = Signal(object)
    """A ``BuildDialog`` is on screen."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        margin: float = EXPIRY_MARGIN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        guard_ms: int = GUARD_MS,
    ) -> None:
        # Each base by name: QObject's own __init__ would call the next one's without arguments.
        Turns.__init__(self, parent, margin=margin, clock=clock)
        QObject.__init__(self)
        self._guard_ms = guard_ms

    async def __call__(self, question: BuildQuestion) -> BuildAnswer:
        received = self._clock()
        async with self.turn(question.plan.requester):
            remaining = None
            if question.write is not None:
                remaining = self.remaining(question.write.expires_in, received)
                if remaining <= 0:
                    return BuildAnswer.EXPIRED
            return await self._ask(question, remaining)

    async def _ask(self, question: BuildQuestion, remaining: float | None) -> BuildAnswer:
        dialog = BuildDialog(question, self._parent, remaining=remaining, guard_ms=self._guard_ms)
        bound = None if remaining is None else remaining + 1.0
        wants = f"{question.plan.requester.label} wants to start a build. Answer it in Helm."
        decided = self.show(dialog, bound, TITLE, wants)
        self.opened.emit(dialog)
        try:
            await decided
            return dialog.answer or BuildAnswer.CANCEL
        except TimeoutError:
            dialog.expire()
            return BuildAnswer.EXPIRED
        finally:
            with contextlib.suppress(RuntimeError):  # its parent may be gone already at shutdown
                self.dismiss(dialog, dialog.answer is BuildAnswer.EXPIRED)
