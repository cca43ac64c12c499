"""The first-run "Get started" panel beside the demo, and adding a workspace from a folder.

The panel offers a new user's next steps as buttons: add a workspace (a folder picker), connect
a service, an MCP server or a database (Settings → Connections, at that kind's tab), and install
an extension (a folder picker, then the review). It says which one the user picked with
``asked``; the main window does the rest. Hide puts it away for good (``hidden``; the main
window remembers it in the preferences); Helm → Get started brings it back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from broker.errors import HelmError
from broker.names import NAME
from broker.settings import Home
from broker.workspaces import add_workspace
from ui import icons
from ui.paths import shown_path
from ui.qt import (
    QComboBox,
    QFileDialog,
    QFrame,
    QLabel,
    QObject,
    QPushButton,
    QSize,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import plain_label, set_plain
from ui.theme import Theme, set_tone
from ui.theme_data import Look
from ui.workspace_model import WorkspaceModel

STEPS = (
    ("workspace", "Add a workspace…", "Choose a folder of yours to work in", "action-workspace"),
    ("http", "Connect a service…", "A web API with a token or OAuth2 sign-in", "kind-http"),
    ("mcp", "Connect an MCP server…", "A local command or a URL", "kind-mcp"),
    ("db", "Connect a database…", "SQLite, PostgreSQL or MySQL", "kind-db"),
    (
        "extension",
        "Install an extension…",
        "Choose its folder, then review what it may do",
        "action-extension",
    ),
)
"""(key, button, what it does, icon): the keys of the kinds are the Settings tabs they open."""


DEMO_INTRO = "This is Helm's demo. Make Helm yours:"
OWN_INTRO = "Add to this workspace, or start another:"


class GetStarted(QFrame):
    asked = Signal(str)
    """The step the user picked (a ``STEPS`` key)."""
    hidden = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("getStarted")
        self.setAccessibleName("Get started")
        col = QVBoxLayout(self)
        heading = QLabel("Get started", self)
        font = heading.font()
        font.setBold(True)
        heading.setFont(font)
        col.addWidget(heading)
        self.intro = plain_label(DEMO_INTRO, self)
        set_tone(self.intro, "muted")
        col.addWidget(self.intro)
        self.buttons: dict[str, QPushButton] = {}
        for key, text, about, _icon in STEPS:
            button = QPushButton(text, self)
            button.setAccessibleDescription(about)
            button.setToolTip(about)
            button.setStyleSheet("text-align: left; padding: 4px 8px;")
            button.clicked.connect(lambda _checked=False, k=key: self.asked.emit(k))
            col.addWidget(button)
            self.buttons[key] = button
        self.hide_button = QToolButton(self)
        self.hide_button.setText("Hide this panel")
        self.hide_button.setAccessibleDescription("Helm → Get started shows it again")
        self.hide_button.setToolTip("Helm → Get started shows it again")
        self.hide_button.setAutoRaise(True)
        self.hide_button.clicked.connect(self._hide)
        col.addWidget(self.hide_button)
        self.show_icons(Theme.of().look)
        Theme.of().changed.connect(self.show_icons)

    def show_intro(self, demo: bool) -> None:
        """The line above the steps: the demo's invitation only while the demo is shown."""
        set_plain(self.intro, DEMO_INTRO if demo else OWN_INTRO)

    def show_icons(self, look: Look) -> None:
        side = self.fontMetrics().height()
        for key, _text, _about, name in STEPS:
            button = self.buttons[key]
            button.setIcon(icons.tinted(name, look.colours.text))
            button.setIconSize(QSize(side, side))

    def _hide(self) -> None:
        self.hide()
        self.hidden.emit()


def workspace_name(folder: Path, taken: set[str]) -> str:
    """A free workspace name from the folder's name (``My Code`` → ``My-Code``, then ``-2``…)."""
    base = "".join(c if c.isascii() and (c.isalnum() or c in "_.-") else "-" for c in folder.name)
    base = base.strip("-._")[:56]
    if not base or not NAME.match(base):
        base = "workspace"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


class WorkspacePicker(QObject):
    """Add a workspace from a folder the user picks; its name comes from the folder's."""

    added = Signal(str, str)
    """The new workspace's name, and what to tell the user."""
    failed = Signal(str)

    def __init__(self, home: Home, parent: QWidget) -> None:
        super().__init__(parent)
        self.home = home
        self.window = parent
        self.picker: QFileDialog | None = None

    def choose(self) -> QFileDialog:
        """A folder picker that does not block (the static helpers run a nested loop)."""
        self.picker = QFileDialog(self.window, "Choose the folder of your new workspace")
        self.picker.setFileMode(QFileDialog.FileMode.Directory)
        self.picker.fileSelected.connect(self.add)
        self.picker.open()
        return self.picker

    def add(self, folder: str) -> str | None:
        path = Path(folder)
        name = workspace_name(path, set(self.home.settings().workspaces))
        try:
            ws = add_workspace(self.home, name, path)
        except HelmError as err:
            self.failed.emit(f"Cannot add the workspace: {err}")
            return None
        self.added.emit(name, f"Added the workspace {name} ({shown_path(ws.root)}).")
        return name


class StepWindow(Protocol):
    """What the first steps need of the main window."""

    model: WorkspaceModel
    workspace_box: QComboBox

    def open_connections(self, kind: str | None = None) -> QWidget: ...

    def choose_extension(self) -> QFileDialog: ...

    def reload_workspaces(self) -> None: ...

    def say(self, text: str, ok: bool = False) -> None: ...


class FirstSteps(QObject):
    """The Get started panel's steps, done in the main window; whether it shows is remembered."""

    def __init__(self, window: StepWindow, parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        self.prefs = window.model.preferences
        self.panel = GetStarted(parent)
        self.panel.asked.connect(self.start)
        self.panel.hidden.connect(lambda: self.keep(False))
        self.panel.setVisible(self.prefs.get().get_started)
        self.picker = WorkspacePicker(window.model.home, parent)
        self.picker.added.connect(self.added)
        self.picker.failed.connect(window.say)

    def start(self, step: str) -> object:
        """A workspace, a connection of one kind (its Settings tab), or an extension."""
        if step == "workspace":
            return self.choose_workspace()
        if step == "extension":
            return self.window.choose_extension()
        return self.window.open_connections(step)

    def choose_workspace(self) -> QFileDialog:
        return self.picker.choose()

    def added(self, name: str, message: str) -> None:
        self.window.reload_workspaces()
        self.window.workspace_box.setCurrentText(name)
        self.window.say(message, ok=True)

    def show(self) -> None:
        self.panel.show()
        self.panel.buttons["workspace"].setFocus()
        self.keep(True)

    def keep(self, shown: bool) -> None:
        try:
            self.prefs.set(self.prefs.get().changed(get_started=shown))
        except (HelmError, OSError) as err:
            self.window.say(f"Cannot remember that: {err}")
