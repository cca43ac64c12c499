"""No extension frame writes to the clipboard: what it writes anyway is emptied at once.

A page may not read or write the clipboard, yet the engine always lets a page copy right after
a click or key press in it (``document.execCommand('copy')`` with user activation), whatever
the settings say. Helm's guard in the page cancels copy and cut events, but a page can shed it
(``document.open()`` removes every listener, an ``about:blank`` subframe never had one). This
guard is the layer that holds: the engine writes the clipboard through Qt in Helm's own
process, so Helm sees every change, and a change that Helm owns, made while a frame can still
copy (within ``ACTIVATION_SECONDS`` of the user's last click or key press in a frame), and that
is not one of Helm's own copies, is emptied.

Helm's own copies are told apart in two ways: Helm's code copies through ``copy_text`` (which
marks the data), and a Copy or Cut key press in one of Helm's own widgets counts for the one
change it makes. A page can do neither: the engine writes only plain formats for a page, and a
page cannot send key presses to Helm's widgets.
"""

from __future__ import annotations

import contextlib
import logging
import time
import weakref
from collections.abc import Callable

from ui.qt import (
    QApplication,
    QClipboard,
    QEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMimeData,
    QObject,
    QWidget,
)

log = logging.getLogger(__name__)

ACTIVATION_SECONDS = 10.0
"""How long after a click or key press a frame may still copy: the engine allows 5 s."""
OWN_FORMAT = "application/x-helm-copy"
"""Marks a copy Helm made itself."""
OWN_KEY_SECONDS = 1.0
"""How long a Copy or Cut key press in Helm's own widgets vouches for the next change."""

# Input that gives a page the right to copy (the engine's "user activation").
ACTIVATING = frozenset(
    {
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonDblClick,
        QEvent.Type.KeyPress,
        QEvent.Type.TouchEnd,
        QEvent.Type.TabletRelease,
    }
)
# Platforms whose clipboard lives in this process alone: everything on it is Helm's.
IN_PROCESS_PLATFORMS = frozenset({"offscreen", "minimal"})


def copy_text(text: str) -> None:
    """Put ``text`` on the clipboard as Helm's own copy (never emptied by the guard)."""
    data = QMimeData()
    data.setText(text)
    data.setData(OWN_FORMAT, b"1")
    QGuiApplication.clipboard().setMimeData(data)


class ClipboardGuard(QObject):
    """One per application; every extension frame is watched by it."""

    def __init__(self, app: QApplication, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(app)
        self._app = app
        self._clock = clock
        self._frames: weakref.WeakSet[QWidget] = weakref.WeakSet()
        self._frame_input = float("-inf")
        self._last_frame = ""
        self._own_key = float("-inf")
        self._clearing = False
        self._focused: QWidget | None = None
        app.clipboard().changed.connect(self._changed)
        app.focusChanged.connect(self._focus_changed)

    @classmethod
    def of(cls, app: QApplication) -> ClipboardGuard:
        guard = app.findChild(ClipboardGuard)
        return guard if guard is not None else cls(app)

    def watch(self, frame: QWidget, name: str) -> None:
        """Count input to ``frame`` (and to the widgets the engine puts inside it)."""
        frame.setProperty("helm_frame", name)
        self._frames.add(frame)
        frame.installEventFilter(self)
        for child in frame.findChildren(QWidget):
            child.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ChildPolished:  # not ChildAdded: that child is still being built
            self._adopt(watched, event)
        elif kind in ACTIVATING:
            self._input(watched, event)
        return False

    def _adopt(self, parent: QObject, event: QEvent) -> None:
        """The engine adds the widget that takes a frame's input after the frame exists."""
        child = event.child()  # type: ignore[attr-defined]  # a QChildEvent
        if isinstance(child, QWidget) and self._frame_of(parent) is not None:
            child.installEventFilter(self)

    def _input(self, watched: QObject, event: QEvent) -> None:
        frame = self._frame_of(watched)
        if frame is not None:
            self._frame_input = self._clock()
            self._last_frame = str(frame.property("helm_frame"))
        elif event.type() == QEvent.Type.KeyPress and self._is_copy(event):
            self._own_key = self._clock()

    def forget(self, frame: QWidget) -> None:
        self._frames.discard(frame)

    def _frame_of(self, obj: QObject) -> QWidget | None:
        if not isinstance(obj, QWidget):
            return None
        for frame in list(self._frames):
            try:
                if frame is obj or frame.isAncestorOf(obj):
                    return frame
            except RuntimeError:  # deleted by Qt before it was forgotten
                self._frames.discard(frame)
        return None

    @staticmethod
    def _is_copy(event: QEvent) -> bool:
        return isinstance(event, QKeyEvent) and (
            event.matches(QKeySequence.StandardKey.Copy) or event.matches(QKeySequence.StandardKey.Cut)
        )

    def _focus_changed(self, old: QWidget | None, new: QWidget | None) -> None:
        # A Copy key press reaches the widget with the focus: watch Helm's focused widget (a
        # filter on the whole application would see every event of every object).
        if self._focused is not None:
            with contextlib.suppress(RuntimeError):  # already deleted
                self._focused.removeEventFilter(self)
            self._focused = None
        if new is not None and self._frame_of(new) is None:
            new.installEventFilter(self)
            self._focused = new

    def _changed(self, mode: QClipboard.Mode) -> None:
        if self._clearing or self._clock() - self._frame_input > ACTIVATION_SECONDS:
            return
        clipboard = self._app.clipboard()
        data = clipboard.mimeData(mode)
        if data is not None and data.hasFormat(OWN_FORMAT):
            return
        if not self._owned(clipboard, mode):
            return  # another application's copy
        if self._clock() - self._own_key <= OWN_KEY_SECONDS:
            self._own_key = float("-inf")  # one change per key press
            return
        log.warning("emptied the clipboard: extension frame %s wrote to it", self._last_frame)
        self._clearing = True
        try:
            clipboard.clear(mode)
        finally:
            self._clearing = False

    def _owned(self, clipboard: QClipboard, mode: QClipboard.Mode) -> bool:
        if QGuiApplication.platformName() in IN_PROCESS_PLATFORMS:
            return True
        if mode == QClipboard.Mode.Selection:
            return clipboard.ownsSelection()
        return clipboard.ownsClipboard()
