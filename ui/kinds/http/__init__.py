"""The http kind's Qt part: the Services page with OAuth2 sign-in (``page``, ``oauth``)."""

from __future__ import annotations

from ui.kinds.http.oauth import BrokerOAuth
from ui.kinds.http.page import ServicesPage
from ui.qt import QWidget
from ui.settings.backend import ConnectionsBackend, ProfileSection

__all__ = ["BrokerOAuth", "ServicesPage", "settings_page"]


def settings_page(section: ProfileSection, backend: ConnectionsBackend, parent: QWidget) -> ServicesPage:
    return ServicesPage(section, backend.oauth, parent)
