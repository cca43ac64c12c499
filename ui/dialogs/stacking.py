"""Confirmations stay above every Helm window, and nothing takes the screen while one is open.

A confirmation — a write, an agent's permission, a link an app wants opened — is a question the
user must see whole and answer on purpose. So while one is open:

- it is kept above every Helm window (``WindowStaysOnTopHint``), a full-screen one included;
- ``Confirmations.opened`` tells every app frame, and a full-screen app goes back inline before
  the dialog appears, so no window of an app is left where keys typed would reach the app;
- ``Confirmations.any_open`` is what an app's request for full screen is refused on.

``Confirmations.of()`` is the one register, shared by every window of the process; dialogs
join it when shown (``ui.dialogs.base.QuestionDialog`` with ``confirmation = True``) and leave
it when hidden or destroyed.
"""

from __future__ import annotations

from typing import ClassVar

from ui.qt import QObject, Qt, QWidget, Signal


class Confirmations(QObject):
    opened = Signal(object)
    """A confirmation dialog is about to appear (the dialog)."""

    _instance: ClassVar[Confirmations | None] = None

    def __init__(self) -> None:
        super().__init__()
        self._open: list[QWidget] = []

    @classmethod
    def of(cls) -> Confirmations:
        if cls._instance is None:
            cls._instance = Confirmations()
        return cls._instance

    @property
    def any_open(self) -> bool:
        return bool(self._open)

    def showing(self, dialog: QWidget) -> None:
        if any(d is dialog for d in self._open):
            return
        self._open.append(dialog)
        key = id(dialog)
        dialog.destroyed.connect(lambda _=None: self._forget(key))
        self.opened.emit(dialog)

    def gone(self, dialog: QWidget) -> None:
        self._forget(id(dialog))

    def _forget(self, key: int) -> None:
        # By identity: a dialog being destroyed can no longer be compared with anything.
        # Pure Python: it may run at exit, after this object's own Qt side is gone.
        self._open = [d for d in self._open if id(d) != key]


def keep_on_top(dialog: QWidget) -> None:
    """Above every other window of Helm, full-screen ones included (set before it is shown)."""
    dialog.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint, True)
