"""Settings → Connections → Services: the http kind's form, with the OAuth2 sign-in box.

The form itself is the kind's data (``broker.kinds.http.form``); this page adds what needs Qt:
the redirect URI, Connect / Disconnect / Cancel sign-in and their progress.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from broker.kinds.forms import FormCheck
from broker.kinds.http import HTTP
from broker.kinds.spec import Outcome
from ui.qt import QGroupBox, QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget
from ui.settings.backend import OAuthConnector, ProfileSection
from ui.settings.page import ProfilePage
from ui.text import plain_label, set_plain
from ui.theme import set_tone

NO_OAUTH = "OAuth2 sign-in is not available in this build of Helm yet."
NEEDS_URLS = (
    "Enter the service's authorize URL and token URL above and Save, then click Connect. Helm signs "
    "in only at the URLs you set here, never at ones an extension names."
)
SIGN_IN_FIELDS = ("base_url", "client_id", "authorize_url", "token_url")


class ServicesPage(ProfilePage):
    def __init__(
        self, section: ProfileSection, oauth: OAuthConnector | None, parent: QWidget | None = None
    ) -> None:
        self.oauth = oauth
        self.oauth_box: QGroupBox | None = None
        assert HTTP.form is not None
        super().__init__(HTTP.form, section, parent)
        self.oauth_box = QGroupBox("OAuth2 sign-in", self)
        col = QVBoxLayout(self.oauth_box)
        self.redirect = plain_label("", self.oauth_box)
        self.oauth_status = plain_label("", self.oauth_box)
        col.addWidget(self.redirect)
        col.addWidget(self.oauth_status)
        row = QHBoxLayout()
        self.connect_button = QPushButton("Connect", self.oauth_box)
        self.disconnect_button = QPushButton("Disconnect", self.oauth_box)
        self.cancel_sign_in = QPushButton("Cancel sign-in", self.oauth_box)
        self.cancel_sign_in.hide()
        self.connect_button.clicked.connect(self.start_connect)
        self.disconnect_button.clicked.connect(self.start_disconnect)
        self.cancel_sign_in.clicked.connect(self.stop_connect)
        row.addWidget(self.connect_button)
        row.addWidget(self.disconnect_button)
        row.addWidget(self.cancel_sign_in)
        row.addStretch(1)
        col.addLayout(row)
        self.oauth_progress = QProgressBar(self.oauth_box)
        self.oauth_progress.setRange(0, 0)
        self.oauth_progress.setMaximumHeight(8)
        self.oauth_progress.setTextVisible(False)
        self.oauth_progress.hide()
        col.addWidget(self.oauth_progress)
        self.oauth_result = plain_label("", self.oauth_box)
        col.addWidget(self.oauth_result)
        self.extra.addWidget(self.oauth_box)
        self.revalidate()

    def after_validate(self, values: Mapping[str, str], result: FormCheck) -> None:
        if self.oauth_box is None:
            return
        self.oauth_box.setVisible(values.get("auth") == "oauth2")
        saved = self.current is not None and self.current == values.get("name")
        if self.oauth is None:
            set_plain(self.redirect, "Redirect URI: http://127.0.0.1:<port>/oauth/callback")
            set_plain(self.oauth_status, NO_OAUTH)
            self.connect_button.setEnabled(False)
            self.disconnect_button.setEnabled(False)
            return
        name = values.get("name", "")
        set_plain(
            self.redirect,
            "Redirect URI (register it with your OAuth client): " + self.oauth.redirect_uri(name),
        )
        waiting = self._not_ready(values) if saved else "Save the profile, then click Connect."
        if waiting is not None or self.current is None:
            set_plain(self.oauth_status, waiting or "")
            self.connect_button.setEnabled(False)
            self.disconnect_button.setEnabled(False)
            return
        status = self.oauth.status(self.current)
        set_plain(self.oauth_status, f"Status: {status}")
        connected = status.startswith("connected")
        self.connect_button.setText("Reconnect" if connected else "Connect")
        self.connect_button.setEnabled(True)
        self.disconnect_button.setEnabled(connected)

    def _not_ready(self, values: Mapping[str, str]) -> str | None:
        """Why the saved profile cannot connect yet: no sign-in URLs, or unsaved changes."""
        stored = self.section.get(self.current) if self.current is not None else None
        if stored is None:
            return "Save the profile, then click Connect."
        if not stored.get("authorize_url") or not stored.get("token_url"):
            return NEEDS_URLS
        if any((values.get(k) or "").strip() != str(stored.get(k) or "") for k in SIGN_IN_FIELDS):
            return "Save your changes, then click Connect."
        return None

    def start_connect(self) -> asyncio.Task[Any] | None:
        if self.oauth is None or self.current is None:
            return None
        self.cancel_sign_in.show()
        action = self.oauth.connect(self.current, self.connect_progress)
        return self.tasks.start(self._oauth(action, "Starting the sign-in…"))

    def connect_progress(self, message: str) -> None:
        set_plain(self.oauth_result, message)

    def stop_connect(self) -> asyncio.Task[Any] | None:
        if self.oauth is None or self.current is None:
            return None
        return self.tasks.start(self.oauth.cancel(self.current))

    def start_disconnect(self) -> asyncio.Task[Any] | None:
        if self.oauth is None or self.current is None:
            return None
        return self.tasks.start(self._oauth(self.oauth.disconnect(self.current), "Disconnecting…"))

    async def _oauth(self, action: Any, message: str) -> Outcome:
        self.oauth_progress.show()
        self.connect_button.setEnabled(False)
        self.disconnect_button.setEnabled(False)
        set_plain(self.oauth_result, message)
        set_tone(self.oauth_result, None)
        try:
            result: Outcome = await action
        finally:
            self.oauth_progress.hide()
            self.cancel_sign_in.hide()
        set_plain(self.oauth_result, result.message)
        set_tone(self.oauth_result, "ok" if result.ok else "error")
        self.revalidate()
        return result
