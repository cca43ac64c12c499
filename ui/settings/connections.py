"""Settings → Connections: Services, MCP servers and Databases, and where secrets are kept."""

from __future__ import annotations

from ui.qt import QTabWidget, QVBoxLayout, QWidget
from ui.settings.backend import ConnectionsBackend
from ui.settings.databases import DatabasesPage
from ui.settings.mcp import McpPage
from ui.settings.services import ServicesPage
from ui.text import plain_label

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
        self.store_label = plain_label(f"Secrets are kept in: {info.description}", self, wrap=False)
        layout.addWidget(self.store_label)
        self.store_warning = plain_label(FILE_STORE_WARNING, self)
        self.store_warning.setObjectName("store-warning")
        self.store_warning.setStyleSheet(
            "background: #fff4d6; color: #5c4400; padding: 6px; border: 1px solid #e0c060;"
        )
        self.store_warning.setVisible(not info.is_keychain)
        layout.addWidget(self.store_warning)
        self.tabs = QTabWidget(self)
        self.services = ServicesPage(backend.services, backend.oauth, self.tabs)
        self.mcp = McpPage(backend.mcp_servers, self.tabs)
        self.databases = DatabasesPage(backend.databases, self.tabs)
        self.tabs.addTab(self.services, "Services")
        self.tabs.addTab(self.mcp, "MCP servers")
        self.tabs.addTab(self.databases, "Databases")
        layout.addWidget(self.tabs, 1)

    def cancel_tasks(self) -> None:
        for page in (self.services, self.mcp, self.databases):
            page.cancel_tasks()
