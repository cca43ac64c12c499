"""Settings → Agents: what ``helm agent add|list|remove`` does, in a window.

The agent profiles in a list beside their form (``broker.agents.form``, drawn by the same
``ProfilePage`` as every connection kind's): a program you installed, or an adapter from
Helm's signed catalogue; the key variable and the key — the key goes to the credential store,
never to settings; whether read requests inside the agent's folders are allowed without asking.
Saving a catalogue adapter installs it first (downloaded and verified, which can take a while:
the page says so, and the window stays responsive); the profile then starts it through Helm's
verifying launcher; closing the window stops an installation. Check verifies an installed
adapter against its receipt, or finds the program.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from broker.agents.form import AGENT_FORM
from broker.errors import HelmError
from ui.qt import QCloseEvent, QVBoxLayout, QWidget, Signal
from ui.settings.backend import ProfileSection, StoreInfo
from ui.settings.connections import FILE_STORE_WARNING
from ui.settings.page import ProfilePage
from ui.text import plain_label
from ui.theme import set_tone

Installer = Callable[[str], Awaitable[list[str]]]
"""Installs the catalogue adapter a spec names; returns the command a profile runs to start it."""


class AgentProfilesPage(ProfilePage):
    changed = Signal()
    """A profile was saved or removed."""

    def __init__(self, section: ProfileSection, install: Installer, parent: QWidget | None = None) -> None:
        super().__init__(AGENT_FORM, section, parent)
        self.install = install
        self.installing: asyncio.Task[None] | None = None
        self.saved.connect(lambda _name: self.changed.emit())

    def save(self) -> None:
        result = self.revalidate()
        if result.raw is None or (self.installing is not None and not self.installing.done()):
            return
        name, secrets = self.to_save()
        if "package" not in result.raw:
            self.store(name, result.raw, secrets)
            return
        self.busy(True, f"Installing {result.raw['package']} from Helm's signed catalogue…")
        self.save_button.setEnabled(False)
        self.installing = self.tasks.start(self._install_and_store(name, result.raw, secrets))

    async def _install_and_store(
        self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]
    ) -> None:
        spec = raw["package"]
        try:
            command = await self.install(spec)
        except HelmError as err:  # refused, or failed with nothing half-installed
            self.say(str(err), ok=False)
            return
        finally:
            self.busy(False)
            self.revalidate()
        stored = {key: value for key, value in raw.items() if key != "package"}
        self.store(name, {**stored, "command": command}, secrets)

    def remove(self) -> None:
        before = self.section.names()
        super().remove()
        if self.section.names() != before:
            self.changed.emit()


class AgentSettings(QWidget):
    def __init__(
        self, section: ProfileSection, install: Installer, store: StoreInfo, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings — Agents")
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(f"Keys are kept in: {store.description}", self, wrap=False))
        warning = plain_label(FILE_STORE_WARNING, self)
        set_tone(warning, "warning")
        warning.setVisible(not store.is_keychain)
        layout.addWidget(warning)
        self.page = AgentProfilesPage(section, install, self)
        layout.addWidget(self.page, 1)

    def closeEvent(self, event: QCloseEvent) -> None:
        # An installation stops with the window (and with Helm): nothing half-installed is kept.
        self.cancel_tasks()
        super().closeEvent(event)

    def cancel_tasks(self) -> None:
        self.page.cancel_tasks()
