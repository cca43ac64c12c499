"""OAuth2 sign-in for Settings → Services, on the http kind's connect API.

Connect asks for the scopes that the current workspace's enabled, approved extensions declare
for the service, opens the provider's page in the system browser (never in a web view inside
Helm), and waits for the redirect to Helm's one-shot listener on 127.0.0.1. The page shows the
exact redirect URI while it waits; Cancel stops the wait and closes the listener.

The http kind's sign-in code (and its HTTP client) is imported on first use, not when the main
window is built: the running kind (``await Broker.kind(HTTP)``) loads, in a worker thread,
with its first call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from broker.broker import Broker
from broker.errors import HelmError
from broker.kinds.http import HTTP
from broker.kinds.spec import Outcome
from ui.qt import QDesktopServices, QUrl

if TYPE_CHECKING:
    from broker.kinds.http.connect import ConnectSession

SIGN_IN_SECONDS = 300.0
REDIRECT_PATTERN = "http://127.0.0.1:<port>/oauth/callback (Helm picks the port when you click Connect)"

Progress = Callable[[str], None]


def open_in_browser(url: str) -> None:
    QDesktopServices.openUrl(QUrl(url))


class BrokerOAuth:
    """``OAuthConnector`` on a broker; ``workspace`` says whose extensions' scopes to ask for."""

    def __init__(
        self,
        broker: Broker,
        workspace: Callable[[], str | None],
        open_url: Callable[[str], object] = open_in_browser,
    ) -> None:
        self.broker = broker
        self.workspace = workspace
        self.open_url = open_url
        self.sessions: dict[str, ConnectSession] = {}

    def redirect_uri(self, name: str) -> str:
        session = self.sessions.get(name)
        return session.redirect_uri if session is not None else REDIRECT_PATTERN

    def status(self, name: str) -> str:
        try:
            return str(self.broker.kind_now(HTTP).sign_in_status(name)["summary"])
        except HelmError as err:
            return f"unknown ({err})"

    async def connect(self, name: str, progress: Progress | None = None) -> Outcome:
        from broker.kinds.http.connect import ConnectError

        workspace = self.workspace()
        if workspace is None:
            return Outcome(
                False, "Open a workspace first: Connect asks for the scopes its extensions declare."
            )
        try:
            session = await (await self.broker.kind(HTTP)).connect(name, workspace)
        except HelmError as err:
            return Outcome(False, str(err))
        self.sessions[name] = session
        try:
            async with session:
                if progress is not None:
                    progress(f"Finish the sign-in in your browser. Redirect URI: {session.redirect_uri}")
                self.open_url(session.authorize_url)
                grant = await session.wait(SIGN_IN_SECONDS)
        except ConnectError as err:
            return Outcome(False, str(err))
        finally:
            self.sessions.pop(name, None)
        scopes = " ".join(grant.scopes) or "no scopes"
        return Outcome(True, f"Connected {name} ({scopes}).")

    async def cancel(self, name: str) -> None:
        session = self.sessions.get(name)
        if session is not None:
            await session.cancel()

    async def disconnect(self, name: str) -> Outcome:
        try:
            (await self.broker.kind(HTTP)).disconnect(name)
        except HelmError as err:
            return Outcome(False, str(err))
        return Outcome(True, f"Disconnected {name}; the profile stays.")
