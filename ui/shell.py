"""The main window's frame: on the screen before the rest of Helm is imported.

Importing Helm's window (the broker and every page) takes a few tenths of a second, longer than
Qt takes to draw a window. So the desktop start shows this frame first, in the user's look, at
the window's size, with Helm's title and icon, and then puts the main window in it
(``adopt``): the window the user sees is the same one throughout, and its place, size and state
on the screen are never handed from one window to another.

It needs only Qt, the look and the icons (``broker.errors`` and ``broker.atomic``, through the
preferences, and not the broker itself).

Closing the frame closes the window in it, and follows that window's answer: a window that
refuses to close keeps its frame open. A window closed from inside (its Quit) takes its frame
with it. Closed before a window was put in it, the frame says so (``closing``), and the start
ends without opening one.
"""

from __future__ import annotations

from pathlib import Path

from ui.icons import app_icon
from ui.preferences import PreferencesStore
from ui.qt import (
    QApplication,
    QCloseEvent,
    QEvent,
    QLabel,
    QObject,
    QPaintEvent,
    Qt,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.theme import Theme, set_tone

WIDTH, HEIGHT = 1200, 760
"""The main window's size when it first opens (``ui.main_window.MainWindow`` opens at it too)."""
WAITING = "Opening Helm…"


class WindowShell(QWidget):
    painted = Signal()
    """The frame was painted for the first time."""
    closing = Signal()
    """The user closed the frame before a window was put in it."""

    def __init__(self, home: Path | None = None) -> None:
        super().__init__()
        if home is not None:
            # The look the window will have, so the frame does not change colour when it comes.
            Theme.of().follow(PreferencesStore.in_home(home).get())
        QApplication.setWindowIcon(app_icon())  # the frame's, the window's and the task bar's
        self.setWindowTitle("Helm")
        self.resize(WIDTH, HEIGHT)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.waiting: QLabel | None = QLabel(WAITING, self)
        self.waiting.setTextFormat(Qt.TextFormat.PlainText)
        self.waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        set_tone(self.waiting, "muted")
        self._layout.addWidget(self.waiting)
        self.content: QWidget | None = None
        self._painted = False

    def adopt(self, window: QWidget) -> None:
        """Put ``window`` (a top-level window not yet shown) in the frame, in place of the
        waiting text; the frame takes its title from then on."""
        if self.content is not None:
            raise RuntimeError("the frame already holds a window")
        self.content = window
        window.setParent(self, Qt.WindowType.Widget)
        if self.waiting is not None:
            self._layout.removeWidget(self.waiting)
            self.waiting.deleteLater()
            self.waiting = None
        self._layout.addWidget(window)
        self.setWindowTitle(window.windowTitle())
        window.windowTitleChanged.connect(self.setWindowTitle)
        window.installEventFilter(self)
        window.show()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.content is None:
            self.closing.emit()
        elif not self.content.close():  # the window's own closeEvent decides
            event.ignore()
            return
        super().closeEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.content and event.type() == QEvent.Type.Close:
            # Once the window has answered: gone, it takes its frame with it.
            QTimer.singleShot(0, self, self._follow_content)
        return False

    def _follow_content(self) -> None:
        if self.content is not None and not self.content.isVisible() and self.isVisible():
            self.hide()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            self.painted.emit()
