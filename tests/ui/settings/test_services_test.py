"""Settings → Services → Test: a GET to the path the user chose, against real servers.

httpbin on 127.0.0.1 answers for the service (``/bearer`` wants the token); Python's HTTPS
server with a self-signed or an expired certificate stands for a service whose TLS is wrong.
The Test button reports the status and the TLS verdict, never the body, never the token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.kinds.spec import Outcome
from tests.helpers import new_broker
from tests.servers.services import HttpServer
from tests.servers.tls import BODY, tls_server
from tests.ui.a11y import texts
from ui.kinds.http.page import ServicesPage
from ui.qt import Qt
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage

TOKEN = "tok-3f9a1c7e-never-shown"


@pytest.fixture
def broker(tmp_path: Path, run: Any) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    b.home.ensure()
    yield b
    run(b.aclose())


Services = Callable[..., ServicesPage]


@pytest.fixture
def services(qtbot: QtBot, broker: Broker) -> Iterator[Services]:
    """Settings → Connections → Services, the profile ``api`` on ``base_url`` selected."""
    windows: list[ConnectionsPage] = []  # kept while the test uses their Services page

    def open_page(base_url: str, token: str | None = TOKEN) -> ServicesPage:
        profile = ServiceProfile("api", base_url)
        SERVICES.store(broker.home, broker.credentials).save(profile, {"token": token})
        window = ConnectionsPage(BrokerConnections(broker))
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        page = window.pages["http"]
        assert isinstance(page, ServicesPage)
        page.list.setCurrentRow(0)
        return page

    return open_page  # its closure keeps the windows for as long as the test holds it


def run_test(qtbot: QtBot, page: ServicesPage, path: str | None) -> Outcome:
    if path is not None:
        page.test_inputs["test_path"].setText(path)
    with qtbot.waitSignal(page.tested, timeout=20_000) as blocker:
        qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    outcome = blocker.args[0]
    assert isinstance(outcome, Outcome)
    return outcome


def shown(page: ServicesPage) -> str:
    return "\n".join(texts(page))


def test_test_gets_the_chosen_path_with_the_token_and_shows_the_status_not_the_body_or_token(
    qtbot: QtBot, services: Services, httpbin_server: HttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    page = services(httpbin_server.url)
    outcome = run_test(qtbot, page, "/bearer")
    assert outcome.ok
    assert page.status.text() == "The service answered: HTTP 200 OK."
    assert outcome.details == (
        f"Sent GET {httpbin_server.url}/bearer with the token in the Authorization header.",
        "Not encrypted: plain http, allowed only on this computer.",
        "The answer's body is not shown.",
    )
    assert "authenticated" not in shown(page)  # httpbin's body says so; the page does not
    assert TOKEN not in shown(page)
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("path", "token", "said"),
    [
        pytest.param("/bearer", None, "HTTP 401 Unauthorized: the service refused the token", id="no-token"),
        pytest.param("/status/404", TOKEN, "HTTP 404 Not Found: nothing at that path", id="not-found"),
        pytest.param("/redirect-to?url=/get", TOKEN, "HTTP 302 Found: a redirect", id="redirect"),
        pytest.param("bearer", TOKEN, "Cannot test that path: start the path with /.", id="bad-path"),
        pytest.param("/../x", TOKEN, "Cannot test that path: the path must not contain", id="dot-dot"),
    ],
)
def test_test_says_what_went_wrong(
    qtbot: QtBot, services: Services, httpbin_server: HttpServer, path: str, token: str | None, said: str
) -> None:
    page = services(httpbin_server.url, token)
    outcome = run_test(qtbot, page, path)
    assert not outcome.ok
    assert outcome.message.startswith(said)


def test_the_default_path_is_the_root(qtbot: QtBot, services: Services, httpbin_server: HttpServer) -> None:
    page = services(httpbin_server.url)
    outcome = run_test(qtbot, page, None)
    assert outcome.details[0].startswith(f"Sent GET {httpbin_server.url}/ ")


def test_test_reports_a_certificate_nobody_vouches_for_and_never_the_answer(
    qtbot: QtBot, services: Services, tmp_path: Path
) -> None:
    with tls_server(tmp_path) as url:
        page = services(url)
        outcome = run_test(qtbot, page, "/")
    assert not outcome.ok
    assert outcome.message == "TLS problem: the certificate was refused (self-signed certificate)."
    assert BODY.decode() not in shown(page)
    assert TOKEN not in shown(page)


def test_test_reports_a_server_that_does_not_speak_tls(
    qtbot: QtBot, services: Services, httpbin_server: HttpServer
) -> None:
    page = services(f"https://{httpbin_server.host}:{httpbin_server.port}")  # plain http on that port
    outcome = run_test(qtbot, page, "/")
    assert not outcome.ok
    assert outcome.message == (
        "TLS problem: the server does not speak TLS there (should the base URL be http://?)."
    )


def test_an_oauth2_service_has_no_test_button(services: Services) -> None:
    page = services("https://api.example.com")
    assert page.test_button.isVisible()
    page.fields["auth"].set("oauth2")
    assert not page.test_button.isVisible()
    assert not page.test_inputs["test_path"].isVisible()
