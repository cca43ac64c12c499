"""Showing a question that arrives while the user is looking elsewhere, without taking the keys.

A write's confirmation can arrive while Helm's window is minimised, behind another window, or
while the user types in another application. ``Attention.show`` then shows the dialog without
activating it, un-minimises and raises Helm's window, asks the desktop to flag it
(``QApplication.alert``) and — when Helm is in the background and a system tray exists — shows
a desktop notification saying which extension asks what. It never activates a window or moves
the keyboard focus: keys typed in the other application never land in the dialog, and when the
user comes to it, the focus is on Cancel, the default (``ui.dialogs.base``).

The notification holds only the extension's name and the kind of question, never the request:
a notification can show on a locked screen. Some notification daemons read markup, so the
name's ``<``, ``>`` and ``&`` are shown as look-alike characters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ui.icons import app_icon
from ui.qt import QApplication, QDialog, QObject, QSystemTrayIcon, Qt, QWidget
from ui.text import elide

NOTIFY_MS = 15_000
_MARKUP = str.maketrans({"<": "\u2039", ">": "\u203a", "&": "\uff06"})


class Notifier(Protocol):
    def notify(self, title: str, message: str) -> None: ...


class TrayNotifier(QObject):
    """Desktop notifications through Helm's tray icon (shown from the first notification on;
    a click on it brings Helm's window to the front)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.icon = QSystemTrayIcon(app_icon(), self)
        self.icon.setToolTip("Helm")
        self.icon.activated.connect(lambda _reason: self._come_back())
        self.icon.messageClicked.connect(self._come_back)

    def notify(self, title: str, message: str) -> None:
        self.icon.show()
        self.icon.showMessage(title, message, app_icon(), NOTIFY_MS)

    def _come_back(self) -> None:
        # The user clicked Helm's icon: now the window may have the keyboard.
        top = self.window.window()  # the frame it sits in, if any (ui.shell)
        top.showNormal()
        top.raise_()
        top.activateWindow()


def tray_notifier(window: QWidget) -> Notifier | None:
    """Notifications where the desktop has a system tray; None where it has not."""
    return TrayNotifier(window) if QSystemTrayIcon.isSystemTrayAvailable() else None


def in_background() -> bool:
    """No window of Helm's has the keyboard: the user is in another application."""
    return QApplication.activeWindow() is None


def plain_notice(text: str) -> str:
    return elide(text, 200).translate(_MARKUP)


class Attention:
    """Shows questions for ``window`` (see the module docstring)."""

    def __init__(
        self,
        window: QWidget,
        notifier: Notifier | None,
        background: Callable[[], bool] = in_background,
    ) -> None:
        self.window = window
        self.notifier = notifier
        self.background = background

    def show(self, dialog: QDialog, title: str, message: str) -> bool:
        """Open ``dialog``; when the user is elsewhere, call them (True) without the keys."""
        away = self.background()
        top = self.window.window()  # the frame it sits in, if any (ui.shell)
        behind = away or not top.isActiveWindow()
        if behind:
            dialog.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        dialog.open()
        if not behind:
            return False
        if top.isMinimized():
            top.setWindowState(top.windowState() & ~Qt.WindowState.WindowMinimized)
        top.raise_()
        QApplication.alert(top)
        if away and self.notifier is not None:
            self.notifier.notify(plain_notice(title), plain_notice(message))
        return True
