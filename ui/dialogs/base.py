"""The shape every Helm question dialog shares: a decision, Cancel by default, an input guard.

A question is answered once, with a ``Decision``: Confirm/Approve gives ``CONFIRMED``; Cancel,
Esc or closing the window gives ``DECLINED``; a deadline running out gives ``EXPIRED``. The
``decided`` signal carries it, so callers await the answer instead of running ``exec()``.

The input guard exists because a dialog can appear under a click or key press the user aimed
at something else a moment before (a button in a widget, Enter in a form). For a short time
after the dialog is shown, mouse and key events addressed to it are dropped — and again each
time it is uncovered or regains the focus, since a window that was above it may have taken a
click or key press meant for what was underneath. The guard filters
the dialog's own widgets, never the whole application: a Python filter on the application sees
every event of the web engine's objects too, and PySide crashes on some of them.

A dialog that is a *confirmation* (``confirmation = True``: a write, an agent's permission, a
link) is kept above every Helm window and registered while shown (``ui.dialogs.stacking``).
"""

from __future__ import annotations

import contextlib

from broker.summary import Decision
from ui.aio import emitted
from ui.dialogs.stacking import Confirmations, keep_on_top
from ui.qt import (
    QDialog,
    QEvent,
    QHBoxLayout,
    QHideEvent,
    QObject,
    QPushButton,
    QShowEvent,
    Qt,
    QTimer,
    QWidget,
    QWindow,
    Signal,
)

GUARD_MS = 500
"""How long after appearing a dialog ignores clicks and key presses."""

_GUARDED_EVENTS = frozenset(
    {
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonRelease,
        QEvent.Type.MouseButtonDblClick,
        QEvent.Type.KeyPress,
        QEvent.Type.KeyRelease,
        QEvent.Type.ShortcutOverride,
    }
)


class InputGuard(QObject):
    """Drops mouse and key events addressed to ``dialog`` until ``ms`` after it is shown."""

    active = False
    """Also on the class: a widget being destroyed with the dialog may still hand the guard an
    event after PySide has let go of the guard's own attributes; it then lets the event pass."""

    def __init__(self, dialog: QWidget, ms: int) -> None:
        super().__init__(dialog)
        self._dialog = dialog
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(ms)
        self._timer.timeout.connect(self.release)
        self._watched: list[QWidget] = []
        self.active = False

    def arm(self) -> None:
        if self._timer.interval() <= 0:
            return
        if not self.active:
            self._watched = [self._dialog, *self._dialog.findChildren(QWidget)]
            for widget in self._watched:
                widget.installEventFilter(self)
        self.active = True
        self._timer.start()

    def release(self) -> None:
        for widget in self._watched:
            with contextlib.suppress(RuntimeError):  # a child already deleted
                widget.removeEventFilter(self)
        self._watched = []
        self.active = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        return self.active and event.type() in _GUARDED_EVENTS


class QuestionDialog(QDialog):
    """A dialog that ends with one ``Decision``; subclasses fill ``body`` and name the buttons."""

    decided = Signal(object)
    """The ``Decision``, emitted once."""

    confirmation = False
    """A confirmation (a write, an agent's permission, a link): above every Helm window, and
    registered with ``Confirmations`` while shown."""

    def __init__(
        self,
        title: str,
        accept_text: str,
        parent: QWidget | None = None,
        *,
        guard_ms: int = GUARD_MS,
        cancel_text: str = "Cancel",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.decision: Decision | None = None
        self.guard = InputGuard(self, guard_ms)
        self.accept_button = QPushButton(accept_text, self)
        self.cancel_button = QPushButton(cancel_text, self)
        # Cancel is the default and has the focus: Enter or Space on a dialog that appeared
        # unexpectedly must never confirm anything.
        self.accept_button.setAutoDefault(False)
        self.accept_button.setDefault(False)
        self.cancel_button.setAutoDefault(True)
        self.cancel_button.setDefault(True)
        self.accept_button.clicked.connect(self.accept)
        self.cancel_button.clicked.connect(self.reject)
        self.buttons = QHBoxLayout()
        self.buttons.addStretch(1)
        self.buttons.addWidget(self.cancel_button)
        self.buttons.addWidget(self.accept_button)
        self.finished.connect(self._finished)
        if self.confirmation:
            keep_on_top(self)

    def focus_cancel(self) -> None:
        self.cancel_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def showEvent(self, event: QShowEvent) -> None:
        if self.confirmation:
            Confirmations.of().showing(self)  # full-screen apps go inline before it appears
        super().showEvent(event)
        self.focus_cancel()
        self.guard.arm()
        window = self.windowHandle()
        if window is not None:
            window.removeEventFilter(self)
            window.installEventFilter(self)

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        if self.confirmation:
            Confirmations.of().gone(self)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.rearm()  # the focus came back: a key press meant for another window may follow

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(watched, QWindow) and event.type() == QEvent.Type.Expose and watched.isExposed():
            self.rearm()  # (part of it) uncovered: whatever covered it may have had the click
        return False

    def rearm(self) -> None:
        """The input guard again, for its whole time, while the question is open."""
        if self.decision is None and self.isVisible():
            self.guard.arm()

    @property
    def guarded(self) -> bool:
        return self.guard.active

    def decide(self, decision: Decision) -> None:
        """Record the answer once and tell whoever is waiting."""
        if self.decision is not None:
            return
        self.decision = decision
        self.guard.release()
        self.decided.emit(decision)

    def _finished(self, result: int) -> None:
        accepted = result == QDialog.DialogCode.Accepted.value
        self.decide(Decision.CONFIRMED if accepted else Decision.DECLINED)


async def answer(dialog: QuestionDialog) -> Decision:
    """Show ``dialog`` window-modally and await its decision (no nested event loop).

    A person answers this one, so there is no deadline; a caller that has one wraps the await
    in ``asyncio.timeout`` and the dialog closes (declined) when it is cancelled.
    """
    decided = emitted(dialog.decided, None, lambda d: isinstance(d, Decision))
    dialog.open()
    try:
        (decision,) = await decided
        return Decision(decision)
    finally:
        # The dialog's parent may be gone already when the waiter is cancelled at shutdown.
        with contextlib.suppress(RuntimeError):
            dialog.close()
