"""Helm's main window: workspaces, their projects and extensions, the dashboard and tool pages.

The window is thin: ``WorkspaceModel`` reads and changes the home; the dashboard and the tool
pages get their frames from a ``ViewFactory``. Plugin review is shown when an extension is
installed and, for every enabled extension whose approval is missing or stale, when its
workspace is opened — one dialog at a time. Settings, the audit log, the DB explorer, the
workspace settings and Preferences open as their own windows. Until the user hides it, the Get
started panel beside the demo offers the first steps (``ui.get_started``).

Approval binds what the dialog showed: the review is a ``broker.extensions.Reviewed``
snapshot, and Approve hands that snapshot to ``approve``, which refuses (and the notice says
so) when the manifest or a pinned MCP tool changed while the dialog was open. An MCP App gets
its own review instead (``ui.apps.add.review_again``): the one ``helm app add`` shows, read
from its server now, and approved as adding the app is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from broker.errors import HelmError, ManifestError, SettingsError
from broker.summary import Decision
from ui import extension_tree
from ui.activity_feed import ActivityFeed
from ui.aio import OwnedTasks
from ui.audit_view import AuditView
from ui.db_explorer import DbExplorerWindow, ExplorerBackend
from ui.dialogs.base import answer
from ui.dialogs.review import review_dialog
from ui.frame_spec import FrameSpec, ViewFactory
from ui.get_started import FirstSteps
from ui.home_watch import HomeWatch
from ui.pages import Pages
from ui.palette import CommandPalette
from ui.preferences_dialog import PreferencesDialog
from ui.qt import (
    QAction,
    QCloseEvent,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QKeySequence,
    QMainWindow,
    QMenu,
    QPushButton,
    QSplitter,
    Qt,
    QTimer,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.settings.backend import ConnectionsBackend
from ui.settings.connections import ConnectionsPage
from ui.shell import HEIGHT, WIDTH
from ui.text import plain_label, set_plain
from ui.theme import Theme, set_tone
from ui.window_commands import window_commands
from ui.workspace_model import ExtensionRow, WorkspaceModel
from ui.workspace_settings import WorkspaceSettings

POLICY_LOOK_MS = 2000
"""How often the window looks whether the organisation's policy changed (a stat of each file;
every call looks for itself, so this only stops the calls already running and says so)."""


class MainWindow(QMainWindow):
    home_changed = Signal(frozenset)
    """The Helm home changed on disk (``ui.home_watch``): the names of the files that did."""
    policy_changed = Signal()
    """The organisation's policy changed (the Agents tab stops the agents it forbids)."""

    def __init__(
        self,
        model: WorkspaceModel,
        factory: ViewFactory,
        connections: ConnectionsBackend,
        explorer: ExplorerBackend | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.factory = factory
        self.connections = connections
        self.explorer = explorer
        self.tasks = OwnedTasks(self)
        self.windows: dict[str, QWidget] = {}
        self.reviewing: asyncio.Task[Any] | None = None
        self._names: dict[tuple[str, str], str] = {}
        self.command_palette: CommandPalette | None = None
        self.setWindowTitle("Helm")
        self.resize(WIDTH, HEIGHT)
        Theme.of().follow(model.preferences.get())
        Theme.of().changed.connect(self._look_changed)
        self._menu()
        split = QSplitter(self)
        split.addWidget(self._sidebar())
        split.addWidget(self._pages(factory))
        split.setStretchFactor(1, 1)
        # The sidebar wide enough for an extension's name, version and state side by side.
        split.setSizes([max(340, 38 * self.fontMetrics().horizontalAdvance("M")), 900])
        self.setCentralWidget(split)
        self.feed = ActivityFeed(model.broker.activity, self)
        self.feed.records.connect(self.tabs.heard)
        self.home_watch = HomeWatch(model.home.path, self)
        self.home_watch.changed.connect(self.follow_home)
        self.policy_timer = QTimer(self)
        self.policy_timer.setInterval(POLICY_LOOK_MS)
        self.policy_timer.timeout.connect(self.follow_policy)
        self.policy_timer.start()
        self.reload_workspaces()
        self.follow_policy()

    def _pages(self, factory: ViewFactory) -> Pages:
        """The dashboard, the activity and the tool pages, as tabs."""
        self.tabs = Pages(self.model, factory, self.extension_name, self.say, self)
        self.dashboard = self.tabs.dashboard
        self.activity = self.tabs.activity
        self.tools = self.tabs.tools
        return self.tabs

    def add_menu_window(self, key: str, text: str, build: Callable[[], QWidget]) -> QAction:
        """A Helm menu entry after "Settings — Connections…" that opens the window ``build``
        makes (once; shown and raised again after)."""
        action = QAction(text, self)
        action.triggered.connect(lambda: self._window(key, build))
        helm_menu = self.menuBar().actions()[0].menu()
        if isinstance(helm_menu, QMenu):
            actions = helm_menu.actions()
            following = actions[actions.index(self.menu_actions["connections"]) + 1]  # Quit follows
            helm_menu.insertAction(following, action)
        self.menu_actions[key] = action
        return action

    def add_page(self, page: QWidget, title: str, name: str) -> None:
        """Another page that is always there, after the dashboard and the activity (Agents)."""
        self.tabs.add_fixed(page, title, name)
        if self.workspace:  # it may be the page the user left in front
            self.tabs.show_named(self.tabs.layout_of(self.workspace).current)

    # -- building ------------------------------------------------------------------------
    def _menu(self) -> None:
        menu = self.menuBar().addMenu("&Helm")
        self.menu_actions: dict[str, QAction] = {}
        for key, text, slot, keys in (
            ("install", "Install extension…", self.choose_extension, ""),
            ("add_workspace", "Add workspace…", lambda: self.first_steps.choose_workspace(), ""),
            ("connections", "Settings — Connections…", self.open_connections, ""),
            ("workspace", "Workspace settings…", self.open_workspace_settings, ""),
            ("audit", "Audit log…", self.open_audit, ""),
            ("explorer", "DB explorer…", self.open_db_explorer, ""),
            ("preferences", "Preferences…", self.open_preferences, "Ctrl+,"),
            ("get_started", "Get started", lambda: self.first_steps.show(), ""),
            ("palette", "Command palette…", self.open_palette, "Ctrl+K"),
        ):
            if key == "explorer" and self.explorer is None:  # no kind supplies one
                continue
            action = QAction(text, self)
            action.triggered.connect(lambda _checked=False, slot=slot: slot())
            if keys:
                action.setShortcut(QKeySequence(keys))
            menu.addAction(action)
            self.menu_actions[key] = action
        menu.addSeparator()
        quit_action = QAction("Quit", self)
        quit_action.triggered.connect(self.close)
        menu.addAction(quit_action)

    def _sidebar(self) -> QWidget:
        side = QWidget(self)
        col = QVBoxLayout(side)
        self.workspace_box = QComboBox(side)
        self.workspace_box.setAccessibleName("Workspace")
        self.workspace_box.currentTextChanged.connect(self.show_workspace)
        col.addWidget(self.workspace_box)
        self.first_steps = FirstSteps(self, side)
        self.get_started = self.first_steps.panel
        col.addWidget(self.get_started)
        self.tree = QTreeWidget(side)
        self.tree.setAccessibleName("Projects and extensions")
        extension_tree.set_up(self.tree)
        self.tree.currentItemChanged.connect(lambda *_: self.update_buttons())
        self.tree.itemDoubleClicked.connect(lambda *_: self.open_selected())
        col.addWidget(self.tree, 1)
        grid = QGridLayout()
        self.buttons: dict[str, QPushButton] = {}
        for i, (key, text, slot, about) in enumerate(
            (
                ("open", "Open", self.open_selected, "Open the selected tool"),
                ("stop", "Stop", self.stop_selected, "Stop the selected extension or connection now"),
                ("toggle", "Disable", self.toggle_selected, "Disable or enable the selected extension"),
                ("review", "Review…", self.review_selected, "Review the selected extension"),
                ("remove", "Remove", self.remove_selected, "Remove the selected extension"),
            )
        ):
            button = QPushButton(text, side)
            button.setAccessibleDescription(about)
            button.setToolTip(about)
            button.clicked.connect(slot)
            grid.addWidget(button, i // 3, i % 3)
            self.buttons[key] = button
        col.addLayout(grid)
        self.notice = plain_label("", side)
        self.notice.setAccessibleName("Notice")
        set_tone(self.notice, "error")
        col.addWidget(self.notice)
        return side

    def say(self, text: str, ok: bool = False) -> None:
        """A line under the list: what went wrong (or, ``ok``, what was done)."""
        set_plain(self.notice, text)
        set_tone(self.notice, "ok" if ok else "error")

    # -- workspace -----------------------------------------------------------------------
    @property
    def workspace(self) -> str | None:
        return self.workspace_box.currentText() or None

    def reload_workspaces(self) -> None:
        current = self.workspace
        self.workspace_box.blockSignals(True)
        self.workspace_box.clear()
        self.workspace_box.addItems(self.model.workspaces())
        if current:
            self.workspace_box.setCurrentText(current)
        self.workspace_box.blockSignals(False)
        self.show_workspace(self.workspace or "")

    def follow_home(self, changed: frozenset[str]) -> None:
        """What a terminal (or another Helm) changed in the home, shown in place: the workspace
        list, the shown workspace's extensions and widgets (unchanged frames are kept), and the
        profiles in Settings — Connections (a form being edited keeps what was typed)."""
        current = self.workspace
        try:
            names = self.model.workspaces()
        except HelmError as err:
            self.say(str(err))
            return
        if names != [self.workspace_box.itemText(i) for i in range(self.workspace_box.count())]:
            self.workspace_box.blockSignals(True)
            self.workspace_box.clear()
            self.workspace_box.addItems(names)
            if current in names:
                self.workspace_box.setCurrentText(current)
            self.workspace_box.blockSignals(False)
        if self.workspace is not None and self.workspace == current:
            rows = self.fill_tree(self.workspace)
            self.tabs.follow(rows, self.save_widget_settings)
            self.update_buttons()
        else:
            self.show_workspace(self.workspace or "", ask=False)
        connections = self.windows.get("connections")
        if isinstance(connections, ConnectionsPage):
            connections.follow()
        self.home_changed.emit(changed)

    def follow_policy(self) -> None:
        """The organisation's policy changed: what it forbids is stopped (``Broker.policy_stops``),
        the notice says why, and the extensions show as they now stand."""
        change = self.model.broker.policy_stops()
        if change is None:
            return
        self.policy_changed.emit()
        if change.notice:
            self.say(change.notice)
        if self.workspace:
            self.fill_tree(self.workspace)
            self.update_buttons()

    def show_workspace(self, name: str, ask: bool = True) -> None:
        self.get_started.show_intro(demo=bool(name) and self.model.is_demo(name))
        rows = self.fill_tree(name) if name else []
        if not name:
            self.tree.clear()
        self.tabs.show_workspace(name or None, rows, self.save_widget_settings)
        self.update_buttons()
        reviewing = self.reviewing is not None and not self.reviewing.done()
        if name and ask and not reviewing and self.model.needing_review(name):
            self.reviewing = self.tasks.start(self.review_pending(name))

    def fill_tree(self, name: str) -> list[ExtensionRow]:
        """The workspace's projects and extensions, keeping the row the user had selected."""
        ext_id, conn_id = extension_tree.selected_ids(self.tree)
        rows = extension_tree.fill(self.tree, self.model, name)
        self._names.update({(name, r.id): r.name for r in rows})
        item = extension_tree.find(self.tree, ext_id, conn_id) if ext_id else None
        if item is not None:
            self.tree.setCurrentItem(item)
        return rows

    def _look_changed(self, _look: object) -> None:
        if self.workspace:  # the icons in the list, in the new look's colours
            self.fill_tree(self.workspace)

    def extension_name(self, workspace: str, extension: str) -> str:
        """An extension's name for people (its id when Helm cannot read its manifest)."""
        key = (workspace, extension)
        if key not in self._names:
            try:
                self._names[key] = self.model.broker.manifest(workspace, extension).name
            except HelmError:
                self._names[key] = extension
        return self._names[key]

    def save_widget_settings(self, ext_id: str, values: dict[str, Any]) -> None:
        if not self.workspace:
            return
        try:
            self.model.widget_settings.set(self.workspace, ext_id, values)
        except SettingsError as err:  # the values still apply to the widget for this session
            self.say(str(err))
        except OSError as err:
            self.say(f"Cannot save the widget's settings: {err.strerror}")

    # -- the selected extension ------------------------------------------------------------
    def selected(self) -> ExtensionRow | None:
        ext_id, _conn = extension_tree.selected_ids(self.tree)
        if not ext_id or not self.workspace:
            return None
        return self.model.row(self.workspace, ext_id)

    def update_buttons(self) -> None:
        row = self.selected()
        self.buttons["open"].setEnabled(row is not None and row.runnable and row.kind == "tool")
        self.buttons["toggle"].setEnabled(row is not None)
        self.buttons["toggle"].setText("Enable" if row is not None and not row.enabled else "Disable")
        self.buttons["review"].setEnabled(row is not None and row.manifest is not None)
        self.buttons["remove"].setEnabled(row is not None)
        stopped = self.selected_is_stopped(row)
        self.buttons["stop"].setEnabled(row is not None)
        self.buttons["stop"].setText("Turn on" if stopped else "Stop")

    def selected_is_stopped(self, row: ExtensionRow | None) -> bool:
        _ext, conn_id = extension_tree.selected_ids(self.tree)
        if row is None:
            return False
        if conn_id is None:
            return row.stopped
        return any(cid == conn_id and stopped for cid, _kind, stopped in row.connections)

    def stop_selected(self) -> None:
        """The kill switch: stop the selected extension or connection now, or turn it back on."""
        row = self.selected()
        if row is None or not self.workspace:
            return
        _ext, conn_id = extension_tree.selected_ids(self.tree)
        what = row.name if conn_id is None else f"{conn_id} of {row.name}"
        try:
            if self.selected_is_stopped(row):
                self.model.turn_on(self.workspace, row.id, conn_id)
                self.say(f"Turned {what} back on.", ok=True)
            else:
                cancelled = self.model.stop(self.workspace, row.id, conn_id)
                stopped = f"Stopped {what}: its calls are refused; {cancelled} running call(s) cancelled."
                self.say(stopped, ok=True)
        except HelmError as err:
            self.say(str(err))
        self.fill_tree(self.workspace)
        self.update_buttons()

    def _change(self, action: Callable[[str, str], None], row: ExtensionRow) -> None:
        if not self.workspace:
            return
        try:
            action(self.workspace, row.id)
        except HelmError as err:
            self.say(str(err))
            return
        self.say("")
        self.show_workspace(self.workspace)

    def toggle_selected(self) -> None:
        row = self.selected()
        if row is not None:
            self._change(lambda ws, ext: self.model.set_enabled(ws, ext, not row.enabled), row)

    def remove_selected(self) -> None:
        row = self.selected()
        if row is not None:
            self._change(self.model.remove, row)

    def review_selected(self) -> asyncio.Task[Any] | None:
        row = self.selected()
        if row is None or row.manifest is None or not self.workspace:
            return None
        return self.tasks.start(self.review(self.workspace, row.id))

    def open_selected(self) -> None:
        row = self.selected()
        if row is None or not row.runnable or row.kind != "tool" or row.manifest is None:
            return
        self.open_tool(FrameSpec(self.workspace or "", row.manifest, f"{row.id}#tool"))

    def open_tool(self, frame: FrameSpec) -> QWidget:
        return self.tabs.open_tool(frame)

    def close_tab(self, index: int) -> None:
        self.tabs.close_tab(index)

    def close_tool(self, ext_id: str) -> None:
        self.tabs.close_tool(ext_id)

    # -- install and review ------------------------------------------------------------
    def choose_extension(self) -> QFileDialog:
        picker = QFileDialog(self, "Choose an extension folder")
        picker.setFileMode(QFileDialog.FileMode.Directory)
        picker.fileSelected.connect(self.install)
        picker.open()
        self.windows["picker"] = picker
        return picker

    def install(self, folder: str) -> asyncio.Task[Any] | None:
        if not self.workspace:
            self.say("Create a workspace first (helm workspace add).")
            return None
        try:
            manifest = self.model.install(self.workspace, Path(folder))
        except ManifestError as err:
            self.say("\n".join(f"{i.path}: {i.message}" for i in err.issues))
            return None
        except HelmError as err:
            self.say(str(err))
            return None
        self.say("")
        self.show_workspace(self.workspace, ask=False)
        return self.tasks.start(self.review(self.workspace, manifest.id))

    async def review_pending(self, workspace: str) -> None:
        for row in self.model.needing_review(workspace):
            await self.review(workspace, row.id, refresh=False)
        if workspace == self.workspace:
            self.show_workspace_quietly(workspace)

    async def review(self, workspace: str, ext_id: str, *, refresh: bool = True) -> Decision:
        """Show the review of one extension; on Approve, approve exactly what it showed."""
        row = self.model.row(workspace, ext_id)
        if row is None or row.manifest is None:
            return Decision.DECLINED
        if row.manifest.app is not None:
            decision = await self._review_app(workspace, ext_id)
        else:
            decision = await self._review_extension(workspace, ext_id)
        if refresh and workspace == self.workspace:
            self.show_workspace_quietly(workspace)
        return decision

    async def _review_extension(self, workspace: str, ext_id: str) -> Decision:
        try:
            reviewed = await self.model.review(workspace, ext_id)
        except HelmError as err:
            self.say(f"Cannot review {ext_id}: {err}")
            return Decision.DECLINED
        dialog = review_dialog(reviewed, self)
        self.windows[f"review:{ext_id}"] = dialog
        decision = await answer(dialog)
        dialog.deleteLater()
        self.windows.pop(f"review:{ext_id}", None)
        if decision is Decision.CONFIRMED:
            try:
                await self.model.approve(reviewed)
            except HelmError as err:  # ApprovalChanged: it changed while the dialog was open
                self.say(f"Not approved: {err}")
        return decision

    async def _review_app(self, workspace: str, ext_id: str) -> Decision:
        """An MCP App's own review (its server read now, what changed since its approval);
        Approve binds what it showed, as adding the app does."""
        from ui.apps.add import review_again  # the MCP library, once an app is reviewed

        key = f"review:{ext_id}"

        def shown(dialog: QWidget) -> None:
            self.windows[key] = dialog

        try:
            manifest, message, good = await review_again(self.model.broker, workspace, ext_id, self, shown)
        finally:
            self.windows.pop(key, None)
        self.say(message, ok=good)
        return Decision.DECLINED if manifest is None else Decision.CONFIRMED

    def show_workspace_quietly(self, workspace: str) -> None:
        """Refresh without asking again about extensions the user just declined."""
        self.show_workspace(workspace, ask=False)

    # -- other windows -------------------------------------------------------------------
    def _window(self, key: str, build: Callable[[], QWidget]) -> QWidget:
        window = self.windows.get(key)
        if window is None:
            window = build()
            window.setWindowFlag(Qt.WindowType.Window, True)
            self.windows[key] = window
        window.show()
        window.raise_()
        return window

    def open_connections(self, kind: str | None = None) -> QWidget:
        """Settings → Connections; with ``kind``, at that kind's tab, ready for a new profile."""
        window = self._window("connections", lambda: ConnectionsPage(self.connections, self))
        if isinstance(window, ConnectionsPage) and kind in window.pages:
            window.show_kind(kind)
        return window

    def open_palette(self) -> CommandPalette:
        """Ctrl+K: every action, found by typing (``ui.palette``)."""
        if self.command_palette is None:
            self.command_palette = CommandPalette(lambda: window_commands(self), self)
        self.command_palette.open_fresh()
        return self.command_palette

    def open_preferences(self) -> QWidget:
        return self._window("preferences", lambda: PreferencesDialog(self.model.preferences, self))

    def open_audit(self) -> QWidget:
        broker = self.model.broker
        return self._window("audit", lambda: AuditView(broker.audit, self, broker.export.status))

    def open_db_explorer(self) -> QWidget | None:
        explorer = self.explorer
        if explorer is None:
            return None
        return self._window("explorer", lambda: DbExplorerWindow(explorer, self))

    def open_workspace_settings(self) -> QWidget | None:
        if not self.workspace:
            return None
        name = self.workspace
        self.windows.pop("workspace", None)
        return self._window("workspace", lambda: WorkspaceSettings(self.model.home, name, self))

    def closeEvent(self, event: QCloseEvent) -> None:
        self.tasks.cancel()
        for window in list(self.windows.values()):
            window.close()
        super().closeEvent(event)

    async def aclose(self) -> None:
        """Cancel what the window still runs (reviews, approvals) and wait for it to end."""
        await self.tasks.aclose()
        await self.dashboard.dispose.wait()
