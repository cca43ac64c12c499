"""What a screen reader and a keyboard user get from a screen, through Qt's accessibility API.

``unnamed`` lists the interactive controls whose accessible interface has no name (a screen
reader would say only "button"); ``texts`` collects every name, value and description the
accessibility tree of a widget exposes (what a screen reader can read out); ``tab_walk``
presses Tab from a widget until the focus comes back, as a keyboard user would.
"""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from ui.qt import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QAccessible,
    QAccessibleInterface,
    QApplication,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollBar,
    Qt,
    QTabBar,
    QTextEdit,
    QWidget,
)

INTERACTIVE = (
    QAbstractButton, QAbstractItemView, QAbstractSpinBox, QComboBox, QLineEdit, QPlainTextEdit,
    QTextEdit, QTabBar,
)  # fmt: skip


def is_interactive(widget: QWidget) -> bool:
    # Scroll bars and headers are parts of their view, which a screen reader reports with them.
    if isinstance(widget, QScrollBar | QHeaderView):
        return False
    if isinstance(widget, INTERACTIVE):
        return True
    return bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus) and type(widget).__name__ != "QWidget"


def name_of(widget: QWidget) -> str:
    """The accessible name; a combo or spin box without one of its own or a label says its
    current value instead, which names nothing, so for those only a real name counts."""
    if isinstance(widget, QComboBox | QAbstractSpinBox) and not widget.accessibleName():
        labels = widget.window().findChildren(QLabel)
        return next((label.text() for label in labels if label.buddy() is widget), "")
    face = QAccessible.queryAccessibleInterface(widget)
    return "" if face is None else face.text(QAccessible.Text.Name).strip()


def describe(widget: QWidget) -> str:
    shown = widget.text() if isinstance(widget, QAbstractButton) else ""
    if isinstance(widget, QLineEdit):
        shown = widget.placeholderText()
    return f"{type(widget).__name__} {widget.objectName()!r} {shown!r} in {type(widget.parent()).__name__}"


def own(root: QWidget) -> list[QWidget]:
    """``root`` and the widgets of its window: not the popups Qt makes for combo boxes, nor
    Qt's private parts (``qt_*``: a spin box's line edit, the menu bar's overflow button),
    which its accessibility interface reports through their owner."""
    window = root.window()
    return [
        w
        for w in (root, *root.findChildren(QWidget))
        if w.window() is window and not w.objectName().startswith("qt_")
    ]


def unnamed(root: QWidget) -> list[str]:
    """Every interactive control under ``root`` (``root`` too) without an accessible name."""
    return [describe(w) for w in own(root) if is_interactive(w) and not name_of(w)]


def texts(widget: QWidget) -> list[str]:
    """Every name, value and description in the accessibility tree under ``widget``."""
    found: list[str] = []
    face = QAccessible.queryAccessibleInterface(widget)
    stack: list[QAccessibleInterface] = [face] if face is not None else []
    while stack:
        node = stack.pop()
        for kind in (QAccessible.Text.Name, QAccessible.Text.Value, QAccessible.Text.Description):
            text = node.text(kind).strip()
            if text:
                found.append(text)
        stack += [c for c in (node.child(i) for i in range(node.childCount())) if c is not None]
    return found


def tab_walk(qtbot: QtBot, start: QWidget, limit: int = 200) -> list[QWidget]:
    """The widgets Tab visits from ``start`` until the focus comes back to it (or ``limit``)."""
    start.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(start.hasFocus, timeout=2000)
    seen = [start]
    for _ in range(limit):
        current = QApplication.focusWidget()
        assert current is not None, "the focus left the window"
        qtbot.keyClick(current, Qt.Key.Key_Tab)
        now = QApplication.focusWidget()
        if now is start or now is None:
            break
        seen.append(now)
    return seen


def reachable(root: QWidget) -> list[QWidget]:
    """The controls a keyboard user must be able to reach: shown, enabled, taking Tab."""
    return [
        w
        for w in own(root)
        if is_interactive(w)
        and w.isVisible()
        and w.isEnabled()
        and bool(w.focusPolicy() & Qt.FocusPolicy.TabFocus)
        and w.focusProxy() is None
    ]
