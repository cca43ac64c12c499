"""The window ``helm`` opens: Helm's main window, its frames made by the extension host.

The composition of the GUI's parts: the broker behind the workspace model, the connections
backend and the parts kinds supply (a sign-in, the DB explorer), the extension host and the MCP
Apps host behind the dashboard, Helm's own write dialog behind every frame, and the coding
agents' host behind the Agents page (closed, with every agent it started, when the window is).

The window shows first: its workspaces, their extensions and the dashboard's frames are filled
in once it has been painted (reading every manifest and making the frames takes longer than
drawing an empty window). The frames then load as soon as the start-up check has passed.
"""

from __future__ import annotations

import asyncio

from app.agents import add_agents
from broker import Broker, Confirmer
from broker.kinds import window_part
from broker.orchestrate.builds import BuildAsker
from broker.orchestrate.kind import CONNECTION as ORCHESTRATE
from broker.orchestrate.kind import OrchestrateKind
from ui.apps.host import AppAwareFactory, AppHost
from ui.attention import Attention, tray_notifier
from ui.dialogs.build import DialogBuildAsker
from ui.dialogs.confirm import DialogConfirmer
from ui.extension_frames import HostViewFactory
from ui.host.host import ExtensionHost
from ui.host.view import ExtensionView
from ui.icons import app_icon
from ui.main_window import MainWindow
from ui.qt import (
    QAction,
    QApplication,
    QCloseEvent,
    QMenu,
    QPaintEvent,
    QShowEvent,
    QTimer,
    QWidget,
    Signal,
)
from ui.settings.backend import BrokerConnections
from ui.shell import WindowShell
from ui.updates_view import UpdatesView
from ui.workspace_model import WorkspaceModel

FILL_WITHIN_MS = 200
"""A window that is not painted at once (minimised, on no screen) is filled in after this."""


class HelmWindow(MainWindow):
    closing = Signal()
    painted = Signal()
    """The window was painted for the first time."""
    filled = Signal()
    """The workspaces were read and the dashboard's frames made (once)."""

    # Class defaults: MainWindow.__init__ calls reload_workspaces before this class's own code.
    _painted = False
    _filled = False
    fill_when_shown = True
    """False: the window waits for ``fill()`` (the demo is being set up for a new user)."""

    def reload_workspaces(self) -> None:
        if self._filled:
            super().reload_workspaces()
        else:
            self.dashboard.empty.hide()  # not "no widgets": they are on their way

    def follow_home(self, changed: frozenset[str]) -> None:
        """Changes on disk before the window is filled (the demo being set up) are read by the
        fill itself: nothing half-installed is shown, and no frame is made twice."""
        if self._filled:
            super().follow_home(changed)

    def fill(self) -> None:
        """Read the workspaces and make the dashboard's frames (once; later through reload)."""
        if not self._filled:
            self._filled = True
            super().reload_workspaces()
            self.filled.emit()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.fill_when_shown:
            QTimer.singleShot(FILL_WITHIN_MS, self, self.fill)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            self.painted.emit()
            if self.fill_when_shown:
                QTimer.singleShot(0, self, self.fill)

    def closeEvent(self, event: QCloseEvent) -> None:
        super().closeEvent(event)
        self.closing.emit()

    def add_apps_menu(self, broker: Broker) -> None:
        """ "Add app…" beside "Install extension…" in the Helm menu."""
        action = QAction("Add app…", self)
        action.triggered.connect(lambda: self.open_add_app(broker))
        helm_menu = self.menuBar().actions()[0].menu()
        if isinstance(helm_menu, QMenu):
            helm_menu.insertAction(self.menu_actions["connections"], action)
        self.menu_actions["add_app"] = action

    def open_add_app(self, broker: Broker) -> QWidget | None:
        from ui.apps.add import AddAppWindow  # with the MCP SDK, when the user asks for it

        if not self.workspace:
            return None
        workspace = self.workspace
        self.windows.pop("add_app", None)
        window = self._window("add_app", lambda: AddAppWindow(broker, workspace, self))
        if isinstance(window, AddAppWindow):
            window.added.connect(lambda _id: self.show_workspace_quietly(workspace))
        return window


class Window:
    """The main window with its extension host, and awaitable milestones for start-up."""

    def __init__(
        self, broker: Broker, confirm: Confirmer | None = None, *, builds: BuildAsker | None = None
    ) -> None:
        QApplication.setWindowIcon(app_icon())  # every window of Helm's, and its task bar entry
        dialogs: DialogConfirmer | None = None
        if confirm is None:
            confirm = dialogs = DialogConfirmer()
        self.confirm = confirm
        build_dialogs: DialogBuildAsker | None = None
        if builds is None:
            builds = build_dialogs = DialogBuildAsker()
        self.broker = broker
        self.host = ExtensionHost(broker, self.confirm)
        self.apps = AppHost(broker)
        self.ready_frames: list[ExtensionView] = []
        self._changed = asyncio.Event()
        self.host.frameReady.connect(self._frame_ready)
        # The parts that kinds supply (broker.kinds.spec.WINDOW_ROLES); none without the kind.
        oauth, explorer = window_part("oauth"), window_part("explorer")

        def workspace() -> str | None:
            return self.window.workspace

        self.window: HelmWindow = HelmWindow(
            WorkspaceModel(broker),
            AppAwareFactory(HostViewFactory(self.host), self.apps),
            BrokerConnections(broker, oauth(broker, workspace) if oauth else None),
            explorer(broker) if explorer else None,
        )
        self.window.add_apps_menu(broker)
        self.apps.reviewAsked.connect(lambda ws, ext: self.window.tasks.start(self.window.review(ws, ext)))
        self.agents = add_agents(self.window, broker)
        broker.builtins[ORCHESTRATE] = OrchestrateKind(broker, builds, self.agents)
        self.updates = UpdatesView(broker, lambda: self.window.workspace, self.window, notify=self.window.say)
        self.window.add_menu_window("updates", "Updates…", lambda: self.updates)
        self.updates.follow_setting()
        if dialogs is not None or build_dialogs is not None:
            attention = Attention(self.window, tray_notifier(self.window))
            for asker in (dialogs, build_dialogs):
                if asker is not None:
                    asker.set_parent(self.window, attention)
        self.closed = asyncio.Event()
        self.window.closing.connect(self.closed.set)
        self._painted = asyncio.Event()
        self.window.painted.connect(self._painted.set)

    def _frame_ready(self, view: ExtensionView) -> None:
        if view not in self.ready_frames:
            self.ready_frames.append(view)
        self._changed.set()

    async def wait_painted(self, within: float) -> bool:
        """Whether the window was painted within ``within`` seconds."""
        try:
            await asyncio.wait_for(self._painted.wait(), within)
        except TimeoutError:
            return False
        return True

    async def wait_ready(self, count: int, within: float) -> bool:
        """Whether ``count`` frames loaded and connected within ``within`` seconds."""
        try:
            async with asyncio.timeout(within):
                while len(self.ready_frames) < count:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            return False
        return True

    async def wait_frame(self, extension: str, within: float) -> ExtensionView | None:
        """The first frame of ``extension`` once it is ready, or None after ``within`` seconds."""
        try:
            async with asyncio.timeout(within):
                while True:
                    for view in self.ready_frames:
                        if view.ctx.extension == extension:
                            return view
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            return None

    async def aclose(self) -> None:
        await self.agents.aclose()
        self.broker.builtins.pop(ORCHESTRATE, None)
        await self.window.aclose()
        await self.apps.aclose()
        await self.host.aclose()
        self.window.deleteLater()


def open_window(
    broker: Broker, confirm: Confirmer | None = None, *, fill: bool = True, shell: WindowShell | None = None
) -> Window:
    """Show Helm's window, in ``shell`` when one is given (the frame the start showed first);
    it fills itself in once painted, or, with ``fill=False``, when its ``window.fill()`` is
    called (after the demo is set up, so no half-installed extension is shown or reviewed)."""
    window = Window(broker, confirm)
    window.window.fill_when_shown = fill
    if shell is None:
        window.window.show()
    else:
        shell.adopt(window.window)
    return window
