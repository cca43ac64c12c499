"""Shared set-up for OAuth2 tests: an OAuth2 service profile, extensions declaring it, a browser."""

from __future__ import annotations

from typing import Any

import httpx

from broker import Broker, CallContext
from broker.kinds.http.connect import start_connect
from broker.kinds.http.oauth2 import Grant
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from tests.helpers import manifest_dict, setup_extension
from tests.servers.services import OAuth2Server
from tests.unit.kinds.http_hostile import Hostile

CALLS = {"get": {"method": "GET", "path": "/{route}"}}
SECRET = "client-secret-5e6f"


def oauth_block(server: OAuth2Server, scopes: list[str], token_url: str | None = None) -> dict[str, Any]:
    return {
        "authorizeUrl": f"{server.url}/authorize?access_type=offline&prompt=consent",
        "tokenUrl": token_url or server.token_endpoint,
        "scopes": scopes,
    }


def add_profile(broker: Broker, api: Hostile, urls: dict[str, Any] | None) -> None:
    """The user's OAuth2 profile "cal" for ``api``, with the sign-in URLs of ``urls`` (an oauth2
    block), or without any (a profile saved before Helm kept them)."""
    if urls is None:
        with broker.home.update() as settings:
            settings.profiles("services")["cal"] = {
                "base_url": api.url,
                "auth": "oauth2",
                "client_id": "helm-test",
            }
        broker.credentials.set("services/cal/client_secret", SECRET)
        return
    profile = ServiceProfile(
        "cal", api.url, "oauth2", client_id="helm-test",
        authorize_url=urls["authorizeUrl"], token_url=urls["tokenUrl"],
    )  # fmt: skip
    SERVICES.store(broker.home, broker.credentials).save(profile, {"client_secret": SECRET})


async def oauth_extension(
    broker: Broker,
    tmp: Any,
    api: Hostile,
    oauth: dict[str, Any] | None,
    *,
    ext_id: str = "com.example.cal",
) -> CallContext:
    """An extension calling "cal"; the first one also adds the profile, with its own URLs."""
    if SERVICES.store(broker.home).get("cal") is None:
        add_profile(broker, api, oauth)
    conn: dict[str, Any] = {"id": "api", "kind": "http", "service": "cal", "calls": CALLS}
    if oauth is not None:
        conn["oauth2"] = oauth
    return await setup_extension(broker, tmp, manifest_dict([conn], id=ext_id))


async def browse(url: str) -> httpx.Response:
    """What the system browser does: open the URL and follow redirects to the listener."""
    async with httpx.AsyncClient(follow_redirects=True, trust_env=False) as browser:
        return await browser.get(url)


async def sign_in(broker: Broker) -> Grant:
    session = await start_connect(broker.home, broker.credentials, "cal", "ws")
    async with session:
        page = await browse(session.authorize_url)
        assert page.status_code == 200
        return await session.wait(10)
