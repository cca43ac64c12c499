"""Workspace settings: projects, the everyday profile switch for TDT writes, the TDT command, and
the agent that runs the builds tools start here."""

from __future__ import annotations

import shlex
from pathlib import Path

from broker.errors import HelmError
from broker.settings import Home
from broker.workspaces import add_project, set_build_agent, set_everyday, set_tdt_command
from ui.paths import path_label, shown_path
from ui.qt import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, plain_label, plain_tip, set_plain
from ui.theme import set_tone

NO_BUILD_AGENT = "None: tools cannot start builds here"
BUILD_AGENT_TEXT = (
    "The agent that runs the builds a tool starts (each build asks you first, in Helm's Start "
    "build dialog). Add agents in Helm → Settings — Agents…."
)

EVERYDAY_TEXT = (
    "Everyday profile: TDT write tools are available to this workspace's extensions. "
    "Every TDT write still asks for your confirmation."
)


def parse_command(text: str) -> tuple[list[str] | None, str | None]:
    """The TDT command as arguments (None for the default), or what is wrong with it."""
    if not text.strip():
        return None, None
    try:
        args = shlex.split(text)
    except ValueError:
        return None, "a quote is not closed"
    return args, None


class WorkspaceSettings(QWidget):
    def __init__(self, home: Home, workspace: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.home = home
        self.workspace = workspace
        ws = home.settings().workspace(workspace)
        self.setWindowTitle(f"Workspace settings — {elide(workspace, 60)}")
        self.resize(640, 480)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        form.addRow("Root", path_label(ws.root, self))
        self.everyday = QCheckBox("Everyday profile (TDT writes)", self)
        self.everyday.setChecked(ws.everyday)
        self.everyday.toggled.connect(self.set_everyday)
        form.addRow("TDT", self.everyday)
        form.addRow("", plain_label(EVERYDAY_TEXT, self))
        self.command = QLineEdit(self)
        self.command.setAccessibleName("TDT command")
        self.command.setPlaceholderText("tdt (default; Helm adds --workspace, mcp serve and --profile)")
        self.command.setText(shlex.join(ws.tdt_command) if ws.tdt_command else "")
        self.command.textChanged.connect(lambda _t: self.check_command())
        cmd_row = QHBoxLayout()
        cmd_row.addWidget(self.command, 1)
        self.save_command_button = QPushButton("Save", self)
        self.save_command_button.clicked.connect(self.save_command)
        cmd_row.addWidget(self.save_command_button)
        form.addRow("TDT command", cmd_row)
        self.command_error = plain_label("", self)
        set_tone(self.command_error, "error")
        form.addRow("", self.command_error)
        self.build_agent = self._build_agent_box(home, ws.build_agent, form)
        layout.addLayout(form)
        layout.addWidget(plain_label("Projects", self))
        self.projects = QListWidget(self)
        self.projects.setAccessibleName("Projects")
        layout.addWidget(self.projects, 1)
        proj_row = QHBoxLayout()
        self.project_id = QLineEdit(self)
        self.project_id.setAccessibleName("Id of the new project")
        self.project_id.setPlaceholderText("project id")
        self.add_button = QPushButton("Add project…", self)
        self.add_button.clicked.connect(self.choose_project)
        proj_row.addWidget(self.project_id, 1)
        proj_row.addWidget(self.add_button)
        layout.addLayout(proj_row)
        self.status = plain_label("", self)
        layout.addWidget(self.status)
        self.picker: QFileDialog | None = None
        self.refresh()
        self.check_command()

    def refresh(self) -> None:
        ws = self.home.settings().workspace(self.workspace)
        self.projects.clear()
        for pid, path in sorted(ws.projects.items()):
            item = QListWidgetItem(elide(f"{pid} — {shown_path(path)}", 160), self.projects)
            item.setToolTip(plain_tip(str(path)))

    def set_everyday(self, on: bool) -> None:
        set_everyday(self.home, self.workspace, on)
        set_plain(self.status, "Everyday profile on." if on else "Everyday profile off: no TDT writes.")

    def check_command(self) -> bool:
        _args, problem = parse_command(self.command.text())
        set_plain(self.command_error, problem or "")
        self.command_error.setVisible(problem is not None)
        self.save_command_button.setEnabled(problem is None)
        return problem is None

    def save_command(self) -> None:
        args, problem = parse_command(self.command.text())
        if problem is not None:
            return
        set_tdt_command(self.home, self.workspace, args)
        set_plain(self.status, "TDT command saved.")

    def _build_agent_box(self, home: Home, chosen: str | None, form: QFormLayout) -> QComboBox:
        """The build agent's row: every agent profile, or none."""
        box = QComboBox(self)
        box.setAccessibleName("Build agent")
        box.addItem(NO_BUILD_AGENT, None)
        for name in sorted(home.settings().agents):
            box.addItem(elide(name, 60), name)
        box.setCurrentIndex(max(box.findData(chosen), 0))
        box.currentIndexChanged.connect(lambda _i: self.save_build_agent())
        form.addRow("Build agent", box)
        form.addRow("", plain_label(BUILD_AGENT_TEXT, self))
        return box

    def save_build_agent(self) -> None:
        agent = self.build_agent.currentData()
        try:
            set_build_agent(self.home, self.workspace, agent)
        except HelmError as err:
            set_plain(self.status, str(err))
            return
        set_plain(self.status, f"Builds run with {agent}." if agent else "No agent runs builds here.")

    def choose_project(self) -> QFileDialog:
        self.picker = QFileDialog(self, "Choose the project folder")
        self.picker.setFileMode(QFileDialog.FileMode.Directory)
        self.picker.fileSelected.connect(self.add_project)
        self.picker.open()
        return self.picker

    def add_project(self, folder: str) -> None:
        try:
            add_project(self.home, self.workspace, self.project_id.text().strip(), Path(folder))
        except HelmError as err:
            set_plain(self.status, str(err))
            return
        self.project_id.clear()
        set_plain(self.status, "Project added.")
        self.refresh()
