"""Settings → Connections: one tab per kind with profiles, and where secrets are kept.

The tabs follow the kind registry: each kind with a ``ProfileForm`` gets the generic
``ProfilePage``, or the page its ``ui/kinds/<kind>/`` package makes (``settings_page``) when
it needs more than the form (the Services page's OAuth2 sign-in).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from broker.kinds import KINDS
from broker.kinds.spec import KindSpec
from ui import icons
from ui.paths import home_relative
from ui.qt import QTabWidget, QVBoxLayout, QWidget
from ui.settings.backend import ConnectionsBackend, ProfileSection
from ui.settings.page import ProfilePage
from ui.text import plain_label, plain_tip
from ui.theme import Theme, set_tone
from ui.theme_data import Look

FILE_STORE_WARNING = (
    "No secure OS keychain was found, so Helm keeps tokens and passwords in a file only you can "
    "read (0600). Anyone who can act as you can read it; install a keychain (e.g. GNOME Keyring "
    "or KWallet) to keep them safer."
)


class ConnectionsPage(QWidget):
    def __init__(self, backend: ConnectionsBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings — Connections")
        layout = QVBoxLayout(self)
        info = backend.store()
        where = f"Secrets are kept in: {info.description}"
        self.store_label = plain_label(home_relative(where), self, wrap=False)
        self.store_label.setToolTip(plain_tip(where))
        layout.addWidget(self.store_label)
        self.store_warning = plain_label(FILE_STORE_WARNING, self)
        self.store_warning.setObjectName("store-warning")
        set_tone(self.store_warning, "warning")
        self.store_warning.setVisible(not info.is_keychain)
        layout.addWidget(self.store_warning)
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName("Kinds of connection")
        self.tabs.tabBar().setAccessibleName("Kinds of connection")
        self.pages: dict[str, ProfilePage] = {}
        """The tab of each kind, by kind name."""
        for name, section in backend.sections.items():
            spec = KINDS[name]
            assert spec.form is not None  # the backend has a section only for a kind with a form
            page = self.pages[name] = settings_page(spec, section, backend, self.tabs)
            self.tabs.addTab(page, spec.form.title)
        layout.addWidget(self.tabs, 1)
        self.show_icons(Theme.of().look)
        Theme.of().changed.connect(self.show_icons)

    def follow(self) -> None:
        """The home's profiles changed on disk (``ui.home_watch``): every tab lists them again."""
        for page in self.pages.values():
            page.follow()

    def show_icons(self, look: Look) -> None:
        for name, page in self.pages.items():
            self.tabs.setTabIcon(self.tabs.indexOf(page), icons.kind_icon(look, name))

    def show_kind(self, kind: str) -> None:
        """The tab of ``kind``, ready for a new profile, the keyboard in its first field."""
        page = self.pages[kind]
        self.tabs.setCurrentWidget(page)
        page.new()
        page.fields["name"].input.setFocus()

    def cancel_tasks(self) -> None:
        for page in self.pages.values():
            page.cancel_tasks()


def settings_page(
    spec: KindSpec[Any, Any, Any], section: ProfileSection, backend: ConnectionsBackend, parent: QWidget
) -> ProfilePage:
    """The kind's own page (``ui.kinds.<kind>.settings_page``) or the generic one."""
    module = f"ui.kinds.{spec.name.replace('-', '_')}"
    if importlib.util.find_spec(module) is not None:
        own = getattr(importlib.import_module(module), "settings_page", None)
        if own is not None:
            page: ProfilePage = own(section, backend, parent)
            return page
    assert spec.form is not None
    return ProfilePage(spec.form, section, parent)
