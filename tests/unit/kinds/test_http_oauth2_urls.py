"""The OAuth2 sign-in URLs are the user's: an extension's manifest never picks where the browser
goes or where the code, the client secret and refresh tokens are posted.

``thief`` is a server that would accept whatever is posted to it; it must never hear a thing.
The authorization server is the strict real one.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from broker import Broker
from broker.errors import ProfileError
from broker.kinds.http.connect import ConnectError, disconnect, start_connect
from broker.kinds.http.oauth2 import Grant, load_grant, save_grant
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from tests.helpers import new_broker
from tests.servers.services import OAuth2Server
from tests.unit.kinds.http_hostile import Hostile, hostile_server
from tests.unit.kinds.http_setup import code
from tests.unit.kinds.oauth_setup import SECRET, add_profile, oauth_block, oauth_extension, sign_in


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def api() -> AsyncIterator[Hostile]:
    async with hostile_server() as s:
        yield s


@pytest.fixture
async def thief() -> AsyncIterator[Hostile]:
    async with hostile_server() as s:
        yield s


def older_grant(broker: Broker, oauth: dict[str, Any]) -> None:
    """A sign-in kept from before the profile had sign-in URLs (made at a manifest's URLs)."""
    grant = Grant("a", None, None, oauth["tokenUrl"], oauth["authorizeUrl"], "helm-test", ("read",))
    save_grant(broker.credentials, "cal", grant)


async def test_connect_never_posts_the_code_or_secret_to_a_token_url_only_the_manifest_names(
    broker: Broker, tmp_path: Path, api: Hostile, thief: Hostile, oauth2_server: OAuth2Server
):
    add_profile(broker, api, oauth_block(oauth2_server, ["read"]))
    stolen = oauth_block(oauth2_server, ["read"], token_url=f"{thief.url}/token")
    await oauth_extension(broker, tmp_path, api, stolen)
    with pytest.raises(
        ConnectError, match=rf"com\.example\.cal: authorize .*, token {re.escape(thief.url)}/token\)"
    ):
        await sign_in(broker)
    assert thief.seen == []
    assert load_grant(broker.credentials, "cal") is None


async def test_connect_never_opens_an_authorize_url_only_the_manifest_names(
    broker: Broker, tmp_path: Path, api: Hostile, thief: Hostile, oauth2_server: OAuth2Server
):
    add_profile(broker, api, oauth_block(oauth2_server, ["read"]))
    phishing = {**oauth_block(oauth2_server, ["read"]), "authorizeUrl": f"{thief.url}/authorize"}
    await oauth_extension(broker, tmp_path, api, phishing)
    with pytest.raises(ConnectError, match="other sign-in URLs"):
        await start_connect(broker.home, broker.credentials, "cal", "ws")


async def test_a_call_whose_connection_declares_other_urls_is_refused(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read")
    await sign_in(broker)
    other = {**oauth_block(oauth2_server, ["read"]), "authorizeUrl": f"{oauth2_server.url}/authorize"}
    ctx = await oauth_extension(broker, tmp_path, api, other, ext_id="com.example.other")
    result = await broker.call(ctx, "api", "get", {"route": "echo"})
    assert code(result) == "refused"
    assert "the ones the user set" in result["error"]["message"]
    assert oauth2_server.url not in json.dumps(result)
    assert api.seen == []


async def test_a_refresh_posts_only_to_the_profiles_token_url(
    broker: Broker, tmp_path: Path, api: Hostile, thief: Hostile, oauth2_server: OAuth2Server
):
    # A sign-in made before Helm kept the URLs in the profile, at a token URL a manifest chose.
    stolen = oauth_block(oauth2_server, ["read"], token_url=f"{thief.url}/token")
    ctx = await oauth_extension(broker, tmp_path, api, stolen)
    old = Grant("old-access", "old-refresh", time.time() + 5, stolen["tokenUrl"], stolen["authorizeUrl"],
                "helm-test", ("read",))  # fmt: skip
    save_grant(broker.credentials, "cal", old)
    profile = SERVICES.store(broker.home).get("cal")
    assert profile is not None
    with broker.home.update() as settings:  # the profile's own token URL is the real server's
        settings.profiles("services")["cal"]["token_url"] = oauth2_server.token_endpoint
    result = await broker.call(ctx, "api", "get", {"route": "echo"})
    assert code(result) == "not_authorized"
    assert thief.seen == []
    assert api.seen == []


async def test_a_profile_without_sign_in_urls_cannot_connect_or_call_and_never_adopts_a_manifests(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    add_profile(broker, api, None)
    oauth = oauth_block(oauth2_server, ["read"])
    ctx = await oauth_extension(broker, tmp_path, api, oauth)
    older_grant(broker, oauth)
    result = await broker.call(ctx, "api", "get", {"route": "echo"})
    assert code(result) == "not_authorized"
    assert "sign-in URLs" in result["error"]["message"]
    with pytest.raises(ConnectError, match=r"no sign-in URLs yet.*--authorize-url URL --token-url URL"):
        await start_connect(broker.home, broker.credentials, "cal", "ws")
    profile = SERVICES.store(broker.home).get("cal")
    assert profile is not None
    assert profile.sign_in_urls is None
    assert api.seen == []


async def test_setting_the_urls_of_an_older_profile_drops_its_sign_in_and_connect_then_works(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    add_profile(broker, api, None)
    oauth = oauth_block(oauth2_server, ["read"])
    ctx = await oauth_extension(broker, tmp_path, api, oauth)
    older_grant(broker, oauth)
    profile = ServiceProfile("cal", api.url, "oauth2", client_id="helm-test",
                             authorize_url=oauth["authorizeUrl"], token_url=oauth["tokenUrl"])  # fmt: skip
    SERVICES.store(broker.home, broker.credentials).save(profile, {"client_secret": SECRET})
    assert load_grant(broker.credentials, "cal") is None
    oauth2_server.configure(scope="read")
    await sign_in(broker)
    assert (await broker.call(ctx, "api", "get", {"route": "echo"}))["ok"]


async def test_changing_a_sign_in_url_drops_the_sign_in_and_keeping_them_keeps_it(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    oauth = oauth_block(oauth2_server, ["read"])
    await oauth_extension(broker, tmp_path, api, oauth)
    oauth2_server.configure(scope="read")
    await sign_in(broker)
    same = SERVICES.store(broker.home).get("cal")
    assert same is not None
    SERVICES.store(broker.home, broker.credentials).save(same, {"client_secret": "new-secret"})
    assert load_grant(broker.credentials, "cal") is not None
    moved = replace(same, token_url=f"{oauth2_server.url}/token2")
    SERVICES.store(broker.home, broker.credentials).save(moved, {"client_secret": "new-secret"})
    assert load_grant(broker.credentials, "cal") is None


@pytest.mark.parametrize(
    ("authorize_url", "token_url", "problem"),
    [
        (None, "https://auth.example.com/token", "the authorize URL is needed"),
        ("https://auth.example.com/authorize", None, "the token URL is needed"),
        ("http://auth.example.com/a", "https://auth.example.com/token", "authorize URL must be https"),
        ("https://auth.example.com/authorize", "https://auth.example.com/token?x=1",
         "token URL must not contain a query"),
        ("https://u:p@auth.example.com/a", "https://auth.example.com/t#f", "credentials; the token URL"),
    ],
)  # fmt: skip
def test_an_oauth2_profile_needs_both_urls_under_the_manifest_rules(
    broker: Broker, api: Hostile, authorize_url: str | None, token_url: str | None, problem: str
):
    profile = ServiceProfile("cal", api.url, "oauth2", client_id="x", authorize_url=authorize_url,
                             token_url=token_url)  # fmt: skip
    with pytest.raises(ProfileError, match=re.escape(problem)):
        SERVICES.store(broker.home, broker.credentials).save(profile)
    assert SERVICES.store(broker.home).get("cal") is None


async def test_a_profile_without_sign_in_urls_can_still_be_disconnected(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    add_profile(broker, api, None)
    oauth = oauth_block(oauth2_server, ["read"])
    older_grant(broker, oauth)
    disconnect(broker.home, broker.credentials, "cal")
    assert load_grant(broker.credentials, "cal") is None
