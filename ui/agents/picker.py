"""The Agents page's choices for a session: which agent, which workspace, which folder, writes.

The folder is the workspace's root or one of its projects (a past session started from the
terminal with several projects adds its own entry when it is resumed; the first project is the
agent's working folder). Names come from the
Helm home; a profile or a settings file Helm cannot read is reported, not guessed around.
"""

from __future__ import annotations

from broker.agents import PastSession, SessionRequest
from broker.errors import HelmError
from broker.policy import decide as policy_decide
from broker.policy import in_force
from broker.settings import Home
from ui.qt import QCheckBox, QComboBox, QHBoxLayout, QLabel, QWidget, Signal
from ui.text import elide

WHOLE_WORKSPACE = "Whole workspace"
WRITE_TEXT = "Allow changes to files (each one is confirmed)"
_SEP = "\n"
"""Joins a folder's project ids in its item data (an id never holds a line break)."""


class Picker(QWidget):
    changed = Signal()

    def __init__(self, home: Home, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.home = home
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.agent = self._combo("Agent", row)
        self.workspace = self._combo("Workspace", row)
        self.folder = self._combo("Folder", row)
        self.write = QCheckBox(WRITE_TEXT, self)
        self.write.setToolTip("Without it, Helm refuses the agent's requests to edit, delete or move files.")
        self.write.toggled.connect(lambda _on: self.changed.emit())
        self.follow_policy()
        row.addWidget(self.write)
        row.addStretch(1)
        self.workspace.currentIndexChanged.connect(lambda _i: self._fill_folders())

    def follow_policy(self) -> None:
        """Writes off, and the switch disabled, while the organisation's policy forbids them."""
        managed = policy_decide.managed(in_force()).get("agents.write")
        if managed:
            self.write.setChecked(False)
            self.write.setToolTip(managed)
        self.write.setEnabled(not managed)

    def _combo(self, label: str, row: QHBoxLayout) -> QComboBox:
        row.addWidget(QLabel(label, self))
        box = QComboBox(self)
        box.setAccessibleName(label)
        box.setMinimumContentsLength(12)
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        box.currentIndexChanged.connect(lambda _i: self.changed.emit())
        row.addWidget(box)
        return box

    def reload(self) -> str:
        """Read the agents and workspaces again, keeping the choices; a problem, or ""."""
        self.follow_policy()
        try:
            settings = self.home.settings()  # every agent, valid or not: a wrong one says why on Send
            agents, workspaces = sorted(settings.agents), sorted(settings.workspaces)
        except HelmError as err:
            return str(err)
        _refill(self.agent, [(elide(n, 40), n) for n in agents])
        _refill(self.workspace, [(elide(n, 40), n) for n in workspaces])
        self._fill_folders()
        return ""

    def _fill_folders(self) -> None:
        name = self.workspace.currentData()
        items: list[tuple[str, object]] = []
        if isinstance(name, str):
            try:
                projects = sorted(self.home.settings().workspace(name).projects)
            except HelmError:
                projects = []
            items = [(WHOLE_WORKSPACE, ""), *((f"Project {elide(p, 40)}", p) for p in projects)]
        _refill(self.folder, items)

    def request(self, resume: str | None = None) -> SessionRequest | None:
        """The session the choices describe (None while an agent or a workspace is missing)."""
        agent, workspace, folder = (b.currentData() for b in (self.agent, self.workspace, self.folder))
        if not isinstance(agent, str) or not isinstance(workspace, str) or not isinstance(folder, str):
            return None
        projects = tuple(folder.split(_SEP)) if folder else ()
        return SessionRequest(agent, workspace, projects, self.write.isChecked(), resume)

    def choose(self, past: PastSession) -> str:
        """Show the choices of a past session; what is gone, or ""."""
        if self.agent.findData(past.agent) < 0:
            return f"The agent {past.agent} of that session is gone."
        if self.workspace.findData(past.workspace) < 0:
            return f"The workspace {past.workspace} of that session is gone."
        self.agent.setCurrentIndex(self.agent.findData(past.agent))
        self.workspace.setCurrentIndex(self.workspace.findData(past.workspace))
        folder = _SEP.join(past.projects)
        if self.folder.findData(folder) < 0:
            self.folder.addItem(elide("Projects " + ", ".join(past.projects), 60), folder)
        self.folder.setCurrentIndex(self.folder.findData(folder))
        return ""


def _refill(box: QComboBox, items: list[tuple[str, object]]) -> None:
    """Replace the items of ``box``, keeping the current one when it is still there."""
    current = box.currentData()
    box.blockSignals(True)
    box.clear()
    for text, data in items:
        box.addItem(text, data)
    index = box.findData(current)
    box.setCurrentIndex(index if index >= 0 else 0 if items else -1)
    box.blockSignals(False)
    box.currentIndexChanged.emit(box.currentIndex())
