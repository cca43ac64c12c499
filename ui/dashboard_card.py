"""One widget on the dashboard: its title bar, frame, settings form, error strip and grips.

Everything around the frame is Helm's, outside the sandbox: the title bar (a handle to drag the
widget elsewhere, a Layout menu, Settings), the error strip that says when the widget's calls
fail (the contract's code, Helm's message, Retry) and the grip in the corner that resizes it.
Every move and resize has a keyboard shortcut, listed in the Layout menu, that works while the
focus is anywhere in Helm's part of the card. The card only asks; the dashboard decides where
the widget goes and keeps the layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ui.frame_spec import FrameSpec, ViewFactory
from ui.qt import (
    QAction,
    QApplication,
    QEvent,
    QFrame,
    QHBoxLayout,
    QKeyEvent,
    QKeySequence,
    QMenu,
    QMouseEvent,
    QObject,
    QPoint,
    QPushButton,
    QResizeEvent,
    QSizePolicy,
    Qt,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import elide, plain_label, set_plain
from ui.theme_data import SPACE
from ui.widgets.settings_form import SettingsForm

MESSAGE_CHARS = 160
"""The strip shows this much of the message (two or three lines); the tooltip has the rest."""
QUIET_OUTCOMES = frozenset({"ok", "declined"})
"""Outcomes that are not a failure of the widget (``declined``: the user said no)."""

# Object names the look of the app styles: the strip's colours are the theme's (``ui.theme``).
STYLE = """
QLabel#errorCode { font-weight: bold; }
"""

LAYOUT_ACTIONS = (
    ("earlier", "Move earlier", "Ctrl+Left"),
    ("later", "Move later", "Ctrl+Right"),
    ("narrower", "Narrower", "Ctrl+Shift+Left"),
    ("wider", "Wider", "Ctrl+Shift+Right"),
    ("shorter", "Shorter", "Ctrl+Shift+Up"),
    ("taller", "Taller", "Ctrl+Shift+Down"),
    ("reset", "Reset size", "Ctrl+Shift+0"),
)


class ErrorStrip(QFrame):
    """Helm's strip above a widget with a failing connection: which one and its code, the
    message of the latest failure, Retry."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorStrip")
        self.setAccessibleName(f"Problem in {name}")
        col = QVBoxLayout(self)
        col.setContentsMargins(8, 4, 4, 4)
        col.setSpacing(2)
        row = QHBoxLayout()
        self.code = plain_label("", self, wrap=False)
        self.code.setObjectName("errorCode")
        self.retry = QPushButton("Retry", self)
        self.retry.setAccessibleName(f"Retry {name}")
        self.retry.setToolTip("Load the widget again")
        row.addWidget(self.code, 1)
        row.addWidget(self.retry)
        col.addLayout(row)
        self.message = plain_label("", self)
        col.addWidget(self.message)
        self.hide()

    def show_failing(self, failing: dict[str, tuple[str, str]]) -> None:
        """``failing``: connection → (code, message), the latest failure last; empty hides it."""
        if not failing:
            self.hide()
            return
        latest = next(reversed(failing))
        code, message = failing[latest]
        if len(failing) > 1:
            others = ", ".join(f"{c} ({k})" for c, (k, _m) in failing.items() if c != latest)
            message = f"{message} Also failing: {others}."
        self.show_error(f"{latest}: {code}" if latest else code, message)

    def show_error(self, code: str, message: str) -> None:
        set_plain(self.code, code)
        set_plain(self.message, elide(message[:1].upper() + message[1:], MESSAGE_CHARS))
        self.message.setToolTip(elide(message, 2000))
        self.setAccessibleDescription(f"{code}: {elide(message, MESSAGE_CHARS)}")
        self.show()


class DragHandle(QToolButton):
    """The title bar's handle: drag it onto another widget's place to move the widget there."""

    dragging = Signal(QPoint)
    dropped = Signal(QPoint)

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText("⠿")
        self.setAutoRaise(True)
        self.setAccessibleName(f"Move {name}")
        self.setToolTip("Drag to move this widget (or Ctrl+Left / Ctrl+Right)")
        self.setCursor(Qt.CursorShape.OpenHandCursor)
        self._pressed: QPoint | None = None
        self._moving = False

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._pressed, self._moving = event.globalPosition().toPoint(), False
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        at = event.globalPosition().toPoint()
        if self._pressed is not None:
            far = (at - self._pressed).manhattanLength() >= QApplication.startDragDistance()
            self._moving = self._moving or far
            if self._moving:
                self.dragging.emit(at)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pressed is not None and self._moving:
            self.dropped.emit(event.globalPosition().toPoint())
        self._pressed, self._moving = None, False
        super().mouseReleaseEvent(event)


class ResizeGrip(QToolButton):
    """The corner grip: drag it to make the widget wider, narrower, taller or shorter."""

    resizing = Signal(QPoint)
    """How far the grip is from where the drag began (pixels)."""
    resized = Signal()

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText("◢")
        self.setAutoRaise(True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keyboard resizes with the shortcuts
        self.setAccessibleName(f"Resize {name}")
        self.setToolTip("Drag to resize this widget (or Ctrl+Shift+arrows)")
        self.setCursor(Qt.CursorShape.SizeFDiagCursor)
        self._pressed: QPoint | None = None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._pressed = event.globalPosition().toPoint()
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._pressed is not None:
            self.resizing.emit(event.globalPosition().toPoint() - self._pressed)
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pressed is not None:
            self._pressed = None
            self.resized.emit()
        event.accept()


class WidgetCard(QFrame):
    """One widget on the dashboard: a title bar, its frame, its settings form on demand."""

    layoutAsked = Signal(str)
    """One of the ``LAYOUT_ACTIONS`` keys, from the menu or its shortcut."""

    contentSized = Signal(int, int)
    """The width and height in pixels the card's content asks for (an MCP App's reported size;
    a side it did not report is 0)."""

    def __init__(
        self,
        frame: FrameSpec,
        factory: ViewFactory,
        save_settings: Callable[[dict[str, Any]], None],
        dispose: Callable[[QWidget], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.dispose, self.frame, self.factory, self.save_settings = dispose, frame, factory, save_settings
        name = frame.manifest.name
        self.setObjectName(f"card:{frame.manifest.id}")
        self.setAccessibleName(f"Widget {name}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setProperty("card", True)  # drawn as a card by the theme's style sheet
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # the grid sizes it
        self.col = QVBoxLayout(self)
        self.col.setContentsMargins(SPACE[1], SPACE[0], SPACE[1], SPACE[1])
        self.col.addLayout(self._title_bar(name))
        self.form: SettingsForm | None = None
        self.failing: dict[str, tuple[str, str]] = {}
        """Connection → (code, message) of its last call, while that call failed."""
        self.strip = ErrorStrip(name, self)
        self.strip.retry.clicked.connect(self.retry)
        self.col.addWidget(self.strip)
        self.view = self._make_view()
        self.col.addWidget(self.view, 1)
        self.grip = ResizeGrip(name, self)
        self.grip.raise_()
        for button in (self.handle, self.layout_button, self.settings_button, self.strip.retry):
            button.installEventFilter(self)

    def _title_bar(self, name: str) -> QHBoxLayout:
        bar = QHBoxLayout()
        self.handle = DragHandle(name, self)
        bar.addWidget(self.handle)
        self.title = plain_label(elide(name, 60), self, wrap=False)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        bar.addWidget(self.title, 1)
        # A push button with a menu keeps room for its arrow (a tool button draws it on the text).
        self.layout_button = QPushButton("Layout", self)
        self.layout_button.setAccessibleName(f"Layout of {name}")
        self.layout_button.setMenu(self._layout_menu())
        self.layout_button.setProperty("menuButton", True)  # room for its arrow
        bar.addWidget(self.layout_button)
        self.settings_button = QPushButton("Settings", self)
        self.settings_button.setAccessibleName(f"Settings of {name}")
        self.settings_button.setCheckable(True)
        self.settings_button.setVisible(bool(self.frame.manifest.settings_form))
        self.settings_button.toggled.connect(self.show_settings)
        bar.addWidget(self.settings_button)
        return bar

    def _layout_menu(self) -> QMenu:
        menu = QMenu(self)
        self.layout_actions: dict[str, QAction] = {}
        for key, text, keys in LAYOUT_ACTIONS:
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))  # shown in the menu; keyPressEvent acts on it
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(lambda _checked=False, k=key: self.layoutAsked.emit(k))
            menu.addAction(action)
            self.layout_actions[key] = action
        return menu

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self._layout_key(event):
            super().keyPressEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Buttons move the focus on arrow keys, whatever the modifiers: the layout's keys are
        # taken before they reach the card's own buttons.
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._layout_key(event)
        return super().eventFilter(watched, event)

    def _layout_key(self, event: QKeyEvent) -> bool:
        pressed = QKeySequence(event.keyCombination())
        for key, action in self.layout_actions.items():
            if action.shortcut().matches(pressed) == QKeySequence.SequenceMatch.ExactMatch:
                self.layoutAsked.emit(key)  # the dashboard ignores what cannot be done now
                event.accept()
                return True
        return False

    def _make_view(self) -> QWidget:
        view = self.factory(self.frame, self)
        view.setMinimumSize(0, 0)  # the grid gives each widget its room; frames follow it
        needed = getattr(view, "settingsNeeded", None)  # an app whose tool needs settings first
        if needed is not None:
            needed.connect(lambda: self.settings_button.setChecked(True))
        reported = getattr(view, "sizeReported", None)  # an app that says how large it is
        if reported is not None:
            reported.connect(lambda size: self._content_sized(size.width(), size.height()))
        return view

    def _content_sized(self, width: int, height: int) -> None:
        # The card's own bar and margins come on top of the content.
        wide = width + self.width() - self.view.width() if width > 0 else 0
        tall = height + self.height() - self.view.height() if height > 0 else 0
        if wide or tall:
            self.contentSized.emit(wide, tall)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        hint = self.grip.sizeHint()
        self.grip.setGeometry(
            self.width() - hint.width(), self.height() - hint.height(), hint.width(), hint.height()
        )

    # -- settings --------------------------------------------------------------------------
    def show_settings(self, on: bool) -> None:
        if not self.frame.manifest.settings_form:
            return
        if on and self.form is None:
            self.form = SettingsForm(self.frame.manifest.settings_form, self.frame.settings, self)
            self.form.applied.connect(self.apply)
            self.col.insertWidget(1, self.form)
        if self.form is not None:
            self.form.setVisible(on)

    def apply(self, values: dict[str, Any]) -> None:
        self.save_settings(values)
        self.frame = FrameSpec(self.frame.workspace, self.frame.manifest, self.frame.instance, values)
        self.replace_view()
        self.settings_button.setChecked(False)

    # -- failures --------------------------------------------------------------------------
    def heard(self, connection: str, outcome: str, message: str) -> None:
        """A call of this widget ended: a failure marks its connection failing (the strip says
        which, with its code) until a call of that same connection succeeds."""
        if outcome == "ok":
            self.failing.pop(connection, None)
        elif outcome not in QUIET_OUTCOMES:
            self.failing.pop(connection, None)  # the latest failure goes last
            self.failing[connection] = (outcome, message)
        else:
            return
        self.strip.show_failing(self.failing)

    def retry(self) -> None:
        """Load the widget again, from its entry page, with the same settings."""
        self.failing.clear()
        self.strip.hide()
        reload = getattr(self.view, "reload", None)
        if callable(reload):
            reload()
        else:
            self.replace_view()

    def replace_view(self) -> None:
        old = self.view
        self.view = self._make_view()
        self.col.replaceWidget(old, self.view)
        self.dispose(old)
        self.grip.raise_()
