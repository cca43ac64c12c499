""" "Add app…": choose an MCP server, one of its apps, review it and add it to the workspace.

The server is asked for its apps (``broker.mcp.discovery``); the chosen one is reviewed
(``broker.apps.review``) in ``AppReviewDialog`` — Cancel by default — and only Add app adds it,
with the resource domains the user ticked and the tools they marked as only reading. Errors are
shown as text in the window.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.apps import review
from broker.apps.errors import AppError
from broker.broker import Broker
from broker.errors import CallError, HelmError
from broker.manifest import Manifest
from broker.mcp import discovery
from broker.mcp.profiles import MCP_SERVERS
from broker.summary import Decision
from ui.aio import OwnedTasks
from ui.apps.dialogs import AppReviewDialog
from ui.dialogs.base import GUARD_MS, answer
from ui.qt import (
    QComboBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import elide, plain_label, set_plain

URI_ROLE = Qt.ItemDataRole.UserRole


class AddAppWindow(QWidget):
    added = Signal(str)
    """The extension id of an app the user added."""

    reviewing = Signal(object)
    """The ``AppReviewDialog`` now shown (tests answer it)."""

    def __init__(
        self, broker: Broker, workspace: str, parent: QWidget | None = None, *, guard_ms: int = GUARD_MS
    ) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window, True)
        self.setWindowTitle(f"Add an app to {elide(workspace, 60)}")
        self.broker, self.workspace, self._guard_ms = broker, workspace, guard_ms
        self.tasks = OwnedTasks(self)
        col = QVBoxLayout(self)
        row = QHBoxLayout()
        self.servers = QComboBox(self)
        self.servers.setAccessibleName("MCP server")
        self.servers.addItems(MCP_SERVERS.store(broker.home).names())
        row.addWidget(self.servers, 1)
        self.find_button = QPushButton("Find apps", self)
        self.find_button.clicked.connect(lambda: self.tasks.start(self.find_apps()))
        row.addWidget(self.find_button)
        col.addLayout(row)
        self.apps = QListWidget(self)
        self.apps.setAccessibleName("Apps of the server")
        col.addWidget(self.apps, 1)
        self.status = plain_label("Choose an MCP server (Settings — Connections adds one).", self)
        col.addWidget(self.status)
        self.review_button = QPushButton("Review and add…", self)
        self.review_button.clicked.connect(lambda: self.tasks.start(self.review_selected()))
        col.addWidget(self.review_button)

    async def find_apps(self) -> None:
        server = self.servers.currentText()
        self.apps.clear()
        if not server:
            return
        set_plain(self.status, f"Asking {server} for its apps…")
        try:
            found = await discovery.list_apps(self.broker, self.workspace, server)
        except (CallError, HelmError) as err:
            set_plain(self.status, f"{server}: {err}")
            return
        for app in found:
            item = QListWidgetItem(elide(f"{app.name} — {app.uri}", 160), self.apps)
            item.setData(URI_ROLE, app.uri)
        set_plain(
            self.status, f"{server} offers {len(found)} app(s)." if found else f"{server} offers no apps."
        )

    async def review_selected(self) -> Decision:
        item = self.apps.currentItem()
        if item is None:
            set_plain(self.status, "Choose an app first.")
            return Decision.DECLINED
        server, uri = self.servers.currentText(), str(item.data(URI_ROLE))
        manifest, message = await review_and_add(
            self.broker, self.workspace, server, uri, self, self.reviewing.emit, guard_ms=self._guard_ms
        )
        set_plain(self.status, message)
        if manifest is None:
            return Decision.DECLINED
        self.added.emit(manifest.id)
        return Decision.CONFIRMED


async def review_and_add(
    broker: Broker,
    workspace: str,
    server: str,
    uri: str,
    parent: QWidget,
    shown: Callable[[AppReviewDialog], None],
    *,
    guard_ms: int = GUARD_MS,
) -> tuple[Manifest | None, str]:
    """Read the app, show its review (``shown`` sees the dialog), add it on "Add app" with the
    ticked resource domains. The manifest added (None if not) and what to tell the user."""
    try:
        reviewed = await review.review(broker, workspace, server, uri)
    except (CallError, HelmError) as err:
        return None, f"Cannot review {uri}: {err}"
    return await _show_and_add(broker, reviewed, parent, shown, guard_ms)


async def review_again(
    broker: Broker,
    workspace: str,
    ext_id: str,
    parent: QWidget,
    shown: Callable[[AppReviewDialog], None],
    *,
    guard_ms: int = GUARD_MS,
) -> tuple[Manifest | None, str, bool]:
    """The main window's Review… of an app in the workspace: the same review as adding it,
    with what changed since its approval; Approve binds what it showed, as adding does. The
    app's manifest once approved, what to tell the user, and whether that is good news (Cancel
    on an app that was approved leaves it approved)."""
    try:
        reviewed = await review.review_installed(broker, workspace, ext_id)
        approved = broker.standing(workspace, ext_id).approved
    except (CallError, HelmError) as err:
        return None, f"Cannot review {ext_id}: {err}", False
    manifest, message = await _show_and_add(broker, reviewed, parent, shown, guard_ms)
    if manifest is None and approved and message == "Not approved.":
        return None, f"Nothing changed: {reviewed.name} keeps the approval it had.", True
    return manifest, message, manifest is not None


async def _show_and_add(
    broker: Broker,
    reviewed: review.AppReview,
    parent: QWidget,
    shown: Callable[[AppReviewDialog], None],
    guard_ms: int,
) -> tuple[Manifest | None, str]:
    dialog = AppReviewDialog(reviewed, parent, guard_ms=guard_ms)
    shown(dialog)
    decision = await answer(dialog)
    allowed, reads = dialog.allowed, dialog.reads
    dialog.deleteLater()
    verb = "approved" if reviewed.installed else "added"
    if decision is not Decision.CONFIRMED:
        return None, f"Not {verb}."
    try:
        manifest = await review.add(broker, reviewed, allowed, reads)
    except (AppError, CallError, HelmError) as err:
        return None, f"Not {verb}: {err}"
    return manifest, f"{verb.capitalize()} {manifest.name}."
