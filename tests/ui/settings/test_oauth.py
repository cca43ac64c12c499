"""Connect / Reconnect / Disconnect in Settings → Services against a real, strict OAuth2 server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.servers.services import OAuth2Server
from ui.kinds.http import BrokerOAuth, ServicesPage
from ui.qt import Qt
from ui.settings.backend import BrokerConnections


class Browser:
    """What the system browser does with the authorize URL: open it, follow the redirects."""

    def __init__(self, follow: bool = True) -> None:
        self.follow = follow
        self.opened: list[str] = []
        self.tasks: set[asyncio.Task[Any]] = set()

    def __call__(self, url: str) -> None:
        self.opened.append(url)
        if self.follow:
            task = asyncio.ensure_future(self.visit(url))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def visit(self, url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=True, trust_env=False) as client:
            await client.get(url)


@pytest.fixture
def broker(tmp_path: Path, run: Any, oauth2_server: OAuth2Server) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    b.home.ensure()
    oauth = {
        "authorizeUrl": f"{oauth2_server.url}/authorize",
        "tokenUrl": oauth2_server.token_endpoint,
        "scopes": ["read"],
    }
    profile = ServiceProfile("cal", "https://api.example.com", "oauth2", client_id="helm-test",
                             authorize_url=oauth["authorizeUrl"], token_url=oauth["tokenUrl"])  # fmt: skip
    SERVICES.store(b.home, b.credentials).save(profile, {"client_secret": "s3cret"})
    conn = {
        "id": "api",
        "kind": "http",
        "service": "cal",
        "oauth2": oauth,
        "calls": {"get": {"method": "GET", "path": "/x"}},
    }
    run(setup_extension(b, tmp_path, manifest_dict([conn])))
    oauth2_server.configure(scope="read")
    yield b
    run(b.aclose())


def services_page(qtbot: QtBot, broker: Broker, browser: Browser) -> ServicesPage:
    backend = BrokerConnections(broker, BrokerOAuth(broker, lambda: "ws", open_url=browser))
    page = ServicesPage(backend.sections["http"], backend.oauth)
    qtbot.addWidget(page)
    page.show()
    page.list.setCurrentRow(0)
    assert page.current == "cal"
    return page


async def outcome(task: asyncio.Future[Any]) -> Any:
    return await task


def test_connect_signs_in_shows_the_result_and_offers_reconnect_and_disconnect(
    qtbot: QtBot, broker: Broker, run: Any
) -> None:
    browser = Browser()
    page = services_page(qtbot, broker, browser)
    assert page.connect_button.text() == "Connect"
    assert page.oauth_status.text() == "Status: not connected"
    assert not page.disconnect_button.isEnabled()
    assert "/oauth/callback" in page.redirect.text()
    task = page.start_connect()
    assert task is not None
    result = run(outcome(task), 30)
    assert result.ok, result.message
    assert page.oauth_result.text() == "Connected cal (read)."
    assert page.oauth_status.text() == "Status: connected (read)"
    assert page.connect_button.text() == "Reconnect"
    assert page.disconnect_button.isEnabled()
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in browser.opened[0]
    assert "s3cret" not in broker.home.settings_path.read_text("utf-8")
    qtbot.mouseClick(page.disconnect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.oauth_status.text() == "Status: not connected", timeout=5000)
    assert page.oauth_result.text() == "Disconnected cal; the profile stays."


def test_while_waiting_the_exact_redirect_uri_is_shown_and_cancel_stops_the_sign_in(
    qtbot: QtBot, broker: Broker, run: Any
) -> None:
    page = services_page(qtbot, broker, Browser(follow=False))
    task = page.start_connect()
    assert task is not None
    qtbot.waitUntil(lambda: "Redirect URI: http://127.0.0.1:" in page.oauth_result.text(), timeout=5000)
    assert page.oauth_progress.isVisible()
    assert page.cancel_sign_in.isVisible()
    qtbot.mouseClick(page.cancel_sign_in, Qt.MouseButton.LeftButton)
    result = run(outcome(task), 10)
    assert not result.ok
    assert page.oauth_result.text() == "the sign-in was cancelled"
    assert not page.oauth_progress.isVisible()
    assert page.oauth_status.text() == "Status: not connected"


def test_connect_without_an_extension_declaring_the_service_says_why(
    qtbot: QtBot, broker: Broker, run: Any
) -> None:
    backend = BrokerConnections(broker, BrokerOAuth(broker, lambda: "ws", open_url=Browser()))
    SERVICES.store(broker.home, broker.credentials).save(
        ServiceProfile("other", "https://o.example.com", "oauth2", client_id="x",
                       authorize_url="https://o.example.com/a", token_url="https://o.example.com/t"),
    )  # fmt: skip
    page = ServicesPage(backend.sections["http"], backend.oauth)
    qtbot.addWidget(page)
    page.list.setCurrentRow(1)
    assert page.current == "other"
    task = page.start_connect()
    assert task is not None
    result = run(outcome(task), 10)
    assert not result.ok
    assert "declares OAuth2 for service 'other'" in page.oauth_result.text()


def test_a_profile_saved_without_sign_in_urls_asks_for_them_and_connects_once_they_are_saved(
    qtbot: QtBot, broker: Broker, run: Any, oauth2_server: OAuth2Server
) -> None:
    with broker.home.update() as settings:  # as an older Helm saved it
        for key in ("authorize_url", "token_url"):
            del settings.profiles("services")["cal"][key]
    page = services_page(qtbot, broker, Browser())
    assert page.oauth_status.text().startswith("Enter the service's authorize URL and token URL above")
    assert not page.connect_button.isEnabled()
    assert page.fields["token_url"].error.text() == "the token URL is needed for OAuth2 sign-in"
    assert not page.save_button.isEnabled()
    for key, url in (
        ("authorize_url", f"{oauth2_server.url}/authorize"),
        ("token_url", oauth2_server.token_endpoint),
    ):
        edit = page.fields[key].edit
        assert edit is not None
        edit.setText(url)
    assert page.save_button.isEnabled()
    assert not page.connect_button.isEnabled()
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert broker.home.settings().profiles("services")["cal"]["token_url"] == oauth2_server.token_endpoint
    assert page.connect_button.isEnabled()
    task = page.start_connect()
    assert task is not None
    result = run(outcome(task), 30)
    assert result.ok, result.message


def test_unsaved_changes_to_the_sign_in_urls_must_be_saved_before_connecting(
    qtbot: QtBot, broker: Broker
) -> None:
    page = services_page(qtbot, broker, Browser())
    assert page.connect_button.isEnabled()
    edit = page.fields["token_url"].edit
    assert edit is not None
    edit.setText("https://elsewhere.example.com/token")
    assert page.oauth_status.text() == "Save your changes, then click Connect."
    assert not page.connect_button.isEnabled()
