"""The main window's pages: the dashboard, the activity and the tool pages, as tabs.

``Pages`` shows a workspace's widgets in the dashboard's grid and its tools as tabs, and keeps
both per workspace (``ui.layout_store``): the grid's order and spans whenever the user changes
them, and which tools were open — and which page was in front — whenever a tab opens, closes
or comes to the front. Opening the workspace again (or Helm again) brings them back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from broker.activity import ActivityRecord
from broker.errors import SettingsError
from ui.activity_view import ActivityView, Names
from ui.dashboard import Dashboard, Saved
from ui.frame_spec import FrameSpec, ViewFactory
from ui.layout_store import WorkspaceLayout
from ui.qt import QTabWidget, QWidget
from ui.text import elide
from ui.workspace_model import ExtensionRow, WorkspaceModel

ACTIVITY = "activity"
"""How the layout names the Activity page when it was in front (None: the dashboard); other
fixed pages (``add_fixed``) have their own names."""


class Pages(QTabWidget):
    def __init__(
        self,
        model: WorkspaceModel,
        factory: ViewFactory,
        names: Names,
        notice: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.model, self.factory, self.notice = model, factory, notice
        self.workspace: str | None = None
        self.tools: dict[str, QWidget] = {}
        self.setTabsClosable(True)
        self.setAccessibleName("Pages")
        self.tabBar().setAccessibleName("Pages: the dashboard, the activity and open tools")
        self.tabCloseRequested.connect(self.close_tab)
        self.dashboard = Dashboard(factory, self)
        self.dashboard.layoutChanged.connect(self.save_dashboard)
        self.activity = ActivityView(model.broker.activity, names, self)
        self.fixed: dict[str, QWidget] = {}
        """The pages that are always there, before the tools, by the name the layout keeps."""
        self._restoring = False
        self._shown: list[tuple[str, object, object]] = []  # the dashboard's frames (``_signature``)
        self.add_fixed(self.dashboard, "Dashboard", "")
        self.add_fixed(self.activity, "Activity", ACTIVITY)
        self.currentChanged.connect(lambda _i: self.save_tabs())

    def add_fixed(self, page: QWidget, title: str, name: str) -> None:
        """A page with no close button, after the other fixed pages; in front again after a
        restart when it was in front (``name``)."""
        index = self.insertTab(len(self.fixed), page, title)
        self._no_close_button(index)
        self.fixed[name] = page

    def _no_close_button(self, index: int) -> None:
        side = self.tabBar().ButtonPosition.RightSide
        button = self.tabBar().tabButton(index, side)
        self.tabBar().setTabButton(index, side, None)
        if button is not None:  # not left hidden in the tab bar, where a screen reader finds it
            button.setParent(None)
            button.deleteLater()

    # -- a workspace ---------------------------------------------------------------------------
    def show_workspace(
        self, name: str | None, rows: list[ExtensionRow], save: Callable[[str, dict[str, Any]], None]
    ) -> None:
        """The workspace's widgets and tools, as the user left them."""
        if name != self.workspace:
            self._restoring = True  # closing the last workspace's tabs is not the user's doing
            try:
                for ext_id in list(self.tools):
                    self.close_tool(ext_id)
            finally:
                self._restoring = False
        self.workspace = name
        layout = self.layout_of(name) if name else WorkspaceLayout()
        frames = self._frames(name, rows)
        if self.model.widget_settings.problem:
            self.notice(self.model.widget_settings.problem)
        self._shown = _signature(frames)
        self.dashboard.show_widgets(frames, save, layout.widgets)
        if name:
            self.restore_tabs(name, rows, layout)

    def follow(self, rows: list[ExtensionRow], save: Callable[[str, dict[str, Any]], None]) -> bool:
        """The shown workspace changed on disk: its widgets again only if they are not the same
        (same extensions, manifests and settings keep their frames, and what the user did in
        them). True when the dashboard was made again."""
        if self.workspace is None or _signature(self._frames(self.workspace, rows)) == self._shown:
            return False
        self.show_workspace(self.workspace, rows, save)
        return True

    def _frames(self, name: str | None, rows: list[ExtensionRow]) -> list[FrameSpec]:
        return [
            FrameSpec(name, r.manifest, f"{r.id}#dashboard", self.model.widget_settings.get(name, r.id))
            for r in rows
            if name and r.runnable and r.kind == "widget" and r.manifest is not None
        ]

    def layout_of(self, workspace: str) -> WorkspaceLayout:
        layout = self.model.layouts.get(workspace)
        if self.model.layouts.problem:
            self.notice(self.model.layouts.problem)
        return layout

    def keep(self, layout: WorkspaceLayout) -> None:
        if self.workspace is None:
            return
        try:
            self.model.layouts.set(self.workspace, layout)
        except SettingsError as err:
            self.notice(str(err))
        except OSError as err:
            self.notice(f"Cannot save the dashboard layout: {err.strerror}")

    def save_dashboard(self, saved: Saved) -> None:
        if self.workspace is None:
            return
        layout = self.model.layouts.get(self.workspace)
        shown = {ext_id for ext_id, _span in saved}
        hidden = tuple(w for w in layout.widgets if w[0] not in shown)  # disabled for now: kept
        self.keep(replace(layout, widgets=tuple(saved) + hidden))

    def save_tabs(self) -> None:
        if self.workspace is None or self._restoring:
            return
        layout = self.model.layouts.get(self.workspace)
        tabs, current = tuple(self.open_tools()), self.current_name()
        if (tabs, current) != (layout.tabs, layout.current):
            self.keep(replace(layout, tabs=tabs, current=current))

    def restore_tabs(self, workspace: str, rows: Iterable[ExtensionRow], layout: WorkspaceLayout) -> None:
        """Open the tools that were open (if they may still run); close those that may not."""
        runnable = {r.id: r for r in rows if r.runnable and r.kind == "tool" and r.manifest is not None}
        self._restoring = True
        try:
            for ext_id in list(self.tools):
                if ext_id not in runnable:
                    self.close_tool(ext_id)
            for ext_id in layout.tabs:
                row = runnable.get(ext_id)
                if row is not None and row.manifest is not None and ext_id not in self.tools:
                    self._open(FrameSpec(workspace, row.manifest, f"{ext_id}#tool"))
            self.show_named(layout.current)
        finally:
            self._restoring = False

    # -- tool tabs -----------------------------------------------------------------------------
    def open_tool(self, frame: FrameSpec) -> QWidget:
        """The tool's tab, opened if it was not, brought to the front and remembered."""
        page = self._open(frame)
        self.save_tabs()
        return page

    def _open(self, frame: FrameSpec) -> QWidget:
        ext_id = frame.manifest.id
        page = self.tools.get(ext_id)
        if page is None:
            page = self.factory(frame, self)
            page.setAccessibleName(f"Tool {frame.manifest.name}")
            self.tools[ext_id] = page
            index = self.addTab(page, elide(frame.manifest.name, 40))
            self.setTabToolTip(index, elide(f"{frame.manifest.name} ({ext_id})", 200))
            close = self.tabBar().tabButton(index, self.tabBar().ButtonPosition.RightSide)
            if close is not None:
                close.setAccessibleName(f"Close {elide(frame.manifest.name, 40)}")
        self.setCurrentWidget(page)
        return page

    def close_tab(self, index: int) -> None:
        page = self.widget(index)
        ext_id = next((i for i, p in self.tools.items() if p is page), None)
        if ext_id is not None:
            self.close_tool(ext_id)
            self.save_tabs()

    def close_tool(self, ext_id: str) -> None:
        page = self.tools.pop(ext_id)
        self.removeTab(self.indexOf(page))
        self.dashboard.dispose(page)

    def open_tools(self) -> list[str]:
        """The open tools, in tab order."""
        by_page = {id(p): i for i, p in self.tools.items()}
        pages = (self.widget(i) for i in range(self.count()))
        return [by_page[id(p)] for p in pages if id(p) in by_page]

    def current_name(self) -> str | None:
        page = self.currentWidget()
        named = {**self.tools, **{n: p for n, p in self.fixed.items() if n}}
        return next((n for n, p in named.items() if p is page), None)

    def show_named(self, name: str | None) -> None:
        page = self.fixed.get(name or "") or self.tools.get(name or "")
        self.setCurrentWidget(page if page is not None else self.dashboard)

    def heard(self, records: list[ActivityRecord]) -> None:
        """Calls that ended: error strips on the dashboard, rows in the Activity view."""
        self.dashboard.heard(records)
        self.activity.add(records)


def _signature(frames: list[FrameSpec]) -> list[tuple[str, object, object]]:
    return [(f.instance, f.manifest.raw, f.settings) for f in frames]
