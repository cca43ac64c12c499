"""Helm ▸ Updates…: what the workspace's catalogues offer, and nothing lands without a click.

Each update shows what it adds to what the user approved, in words ("no new capabilities"
when nothing grows), and a Review update… button that opens the usual review with those words
on top; only its Approve update lands it (``broker.catalogue.updates.approve_update``). The
approved version keeps running until then. A version its catalogue withdrew is stopped, and
shown with the catalogue's reason. An extension updated from a catalogue can step back to the
version before. Checking happens when the user clicks Check now, or in the background when
they turned that on (the checkbox; off unless turned on).

The catalogue modules that reach the network (and httpx) are imported at the first check, not
when the window starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from broker import Broker
from broker.catalogue.store import CatalogueStore
from broker.errors import HelmError
from broker.summary import Decision
from ui.aio import OwnedTasks
from ui.dialogs.base import answer
from ui.dialogs.review import review_dialog
from ui.qt import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    Qt,
    QTimer,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, plain_label, set_plain
from ui.theme import set_tone

if TYPE_CHECKING:
    from broker.catalogue.updates import Update, UpdateCheck

POLL_MS = 6 * 60 * 60 * 1000
"""How often the background check runs, when the user turned it on."""


class UpdatesView(QWidget):
    """The Updates window of one Helm home; ``workspace`` says which workspace is shown."""

    def __init__(
        self,
        broker: Broker,
        workspace: Callable[[], str | None],
        parent: QWidget | None = None,
        *,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window, True)
        self.setWindowTitle("Updates")
        self.notify = notify
        """Told when a check finds something while this window is hidden (the main window's notice)."""
        self.setMinimumSize(560, 420)
        self.broker, self.workspace = broker, workspace
        self.tasks = OwnedTasks(self)
        self.windows: dict[str, QWidget] = {}
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.check_button = QPushButton("Check now", self)
        self.check_button.clicked.connect(lambda: self.tasks.start(self.check()))
        top.addWidget(self.check_button)
        self.poll_box = QCheckBox("Check for updates in the background", self)
        self.poll_box.setChecked(CatalogueStore(broker.home.path).read().poll)
        self.poll_box.toggled.connect(self.set_polling)
        top.addWidget(self.poll_box, 1)
        layout.addLayout(top)
        self.status = plain_label("", self)
        self.status.setObjectName("status")
        layout.addWidget(self.status)
        scroll = QScrollArea(self)
        scroll.setAccessibleName("Updates and withdrawn versions")
        scroll.setWidgetResizable(True)
        self.body = QWidget(scroll)
        self.items = QVBoxLayout(self.body)
        self.items.addStretch(1)
        scroll.setWidget(self.body)
        layout.addWidget(scroll, 1)
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(lambda: self.tasks.start(self.check()))
        self.found: UpdateCheck | None = None

    # -- checking ------------------------------------------------------------------------
    def set_polling(self, on: bool) -> None:
        """The user's setting: check in the background (now, then every six hours) or not."""
        try:
            with CatalogueStore(self.broker.home.path).update() as state:
                state.poll = on
        except HelmError as err:
            self.say(f"Cannot change the setting: {err}", "error")
            return
        self.follow_setting()

    def follow_setting(self) -> None:
        """Start or stop the background check as the setting says (the window calls this once)."""
        if CatalogueStore(self.broker.home.path).read().poll:
            if not self.timer.isActive():
                self.timer.start()
                self.tasks.start(self.check())
        else:
            self.timer.stop()

    async def check(self) -> UpdateCheck | None:
        from broker.catalogue.updates import check

        workspace = self.workspace()
        if workspace is None:
            self.say("Choose a workspace first.", "muted")
            return None
        self.check_button.setEnabled(False)
        self.say(f"Checking the catalogues of {workspace}…", "muted")
        try:
            self.found = await check(self.broker, workspace)
        except HelmError as err:
            self.say(f"Cannot check for updates: {err}", "error")
            return None
        finally:
            self.check_button.setEnabled(True)
        self.show_found(self.found)
        waiting = len(self.found.updates) + len(self.found.withdrawn)
        if waiting and self.notify is not None and not self.isVisible():
            self.notify(f"{self.status.text()} See Helm ▸ Updates…")
        return self.found

    # -- showing -------------------------------------------------------------------------
    def say(self, text: str, tone: str | None = None) -> None:
        set_plain(self.status, text)
        set_tone(self.status, tone)

    def show_found(self, found: UpdateCheck) -> None:
        while self.items.count() > 1:
            item = self.items.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for gone in found.withdrawn:
            self._add(_note(f"Stopped: {gone.message}", "error", self.body))
        for line in (*found.problems, *found.notices):
            self._add(_note(line, "warning", self.body))
        for update in found.updates:
            self._add(self._update_box(update))
        self._add_rollbacks()
        count = len(found.updates)
        self.say(
            "No updates." if not count else f"{count} update(s) wait for your approval.",
            "muted" if not count else None,
        )

    def _add(self, widget: QWidget) -> None:
        self.items.insertWidget(self.items.count() - 1, widget)

    def _update_box(self, update: Update) -> QGroupBox:
        # Named by its id beside its name, as every dialog names an extension (a name alone can pose).
        name = elide(update.fetched.manifest.name, 80)
        title = f"{name} {update.installed_version} → {update.version} ({update.extension})"
        box = QGroupBox(title, self.body)
        box.setObjectName(f"update:{update.extension}")
        col = QVBoxLayout(box)
        col.addWidget(
            plain_label(f"From catalogue {update.fetched.catalogue}. Compared with what you approved:", box)
        )
        diff = plain_label("\n".join(f"• {line}" for line in update.diff.lines()), box)
        diff.setObjectName("diff")
        set_tone(diff, "warning" if update.diff.grows else "ok")
        col.addWidget(diff)
        if update.fetched.notice:
            col.addWidget(_note(update.fetched.notice, "warning", box))
        button = QPushButton("Review update…", box)
        button.setObjectName("review")
        button.clicked.connect(lambda: self.tasks.start(self.review(update)))
        col.addWidget(button)
        return box

    def _add_rollbacks(self) -> None:
        workspace = self.workspace()
        if workspace is None:
            return
        installed = CatalogueStore(self.broker.home.path).read().installed.get(workspace, {})
        for ext_id, prov in sorted(installed.items()):
            if prov.previous is None:
                continue
            button = QPushButton(f"Step {ext_id} back to {prov.previous.get('version')}", self.body)
            button.setObjectName(f"rollback:{ext_id}")
            button.clicked.connect(lambda _=False, e=ext_id: self.tasks.start(self.rollback(workspace, e)))
            self._add(button)

    # -- acting --------------------------------------------------------------------------
    async def review(self, update: Update) -> Decision:
        """The usual review of the update, with what it adds on top; lands it on Approve update."""
        from broker.catalogue.updates import approve_update, review_update

        try:
            reviewed = await review_update(self.broker, update)
        except HelmError as err:
            self.say(f"Cannot review {update.extension}: {err}", "error")
            return Decision.DECLINED
        dialog = review_dialog(reviewed, self, update=update.diff.lines())
        key = f"review:{update.extension}"
        self.windows[key] = dialog
        try:
            decision = await answer(dialog)
        finally:
            self.windows.pop(key, None)
            dialog.deleteLater()
        if decision is not Decision.CONFIRMED:
            kept = f"{update.extension} {update.installed_version}"
            self.say(f"Not updated: {kept} keeps running as you approved it.")
            return decision
        try:
            await approve_update(self.broker, update, reviewed)
        except HelmError as err:
            self.say(f"Not updated: {err}", "error")
            return Decision.DECLINED
        self.say(f"Updated {update.extension} to {update.version}.", "ok")
        await self.check()
        return decision

    async def rollback(self, workspace: str, extension: str) -> None:
        from broker.catalogue.updates import rollback

        try:
            version = await rollback(self.broker, workspace, extension)
        except HelmError as err:
            self.say(f"Cannot step back: {err}", "error")
            return
        self.say(f"{extension} is back at {version}, as you approved it.", "ok")
        await self.check()


def _note(text: str, tone: str, parent: QWidget) -> QWidget:
    label = plain_label(text, parent)
    set_tone(label, tone)
    return label
