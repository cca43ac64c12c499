"""OAuth2 sign-in (authorization code + PKCE S256) against a strict real authorization server.

The "browser" is an httpx client that opens the authorize URL and follows the server's
redirect to Helm's loopback listener, as the system browser would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from broker import Broker
from broker.kinds.http.connect import ConnectError, ConnectSession, connect_plan, start_connect
from broker.kinds.http.oauth2 import load_grant
from broker.kinds.http.profiles import SERVICES
from broker.redact import REDACTED
from tests.helpers import new_broker
from tests.servers.services import OAuth2Server
from tests.unit.kinds.http_hostile import Hostile, hostile_server
from tests.unit.kinds.http_setup import code
from tests.unit.kinds.oauth_setup import SECRET, browse, oauth_block, oauth_extension, sign_in


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def api() -> AsyncIterator[Hostile]:
    async with hostile_server() as s:
        yield s


def state_of(session: ConnectSession) -> str:
    return parse_qs(urlsplit(session.authorize_url).query)["state"][0]


async def test_a_call_before_the_first_connect_is_not_authorized(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    ctx = await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    assert code(await broker.call(ctx, "api", "get", {"route": "x"})) == "not_authorized"
    assert api.seen == []


async def test_connect_keeps_the_grant_and_calls_send_it_as_a_bearer_token(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    ctx = await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read")
    grant = await sign_in(broker)
    assert grant.scopes == ("read",)
    result = await broker.call(ctx, "api", "get", {"route": "echo"})
    assert result["ok"], result
    assert api.last.headers["authorization"] == f"Bearer {grant.access_token}"
    assert result["data"]["headers"]["authorization"] == REDACTED  # the server echoed it
    assert grant.access_token not in json.dumps(result)
    settings_text = (broker.home.settings_path).read_text()
    assert grant.access_token not in settings_text
    assert SECRET not in settings_text


async def test_the_authorize_url_keeps_provider_parameters_and_sets_helms_own(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    oauth = oauth_block(oauth2_server, ["read"])
    oauth["authorizeUrl"] += "&state=evil&scope=admin&redirect_uri=http://evil.invalid/"
    await oauth_extension(broker, tmp_path, api, oauth)
    session = await start_connect(broker.home, broker.credentials, "cal", "ws")
    async with session:
        query = parse_qs(urlsplit(session.authorize_url).query)
    assert query["access_type"] == ["offline"]
    assert query["prompt"] == ["consent"]
    assert query["response_type"] == ["code"]
    assert query["client_id"] == ["helm-test"]
    assert query["redirect_uri"] == [session.redirect_uri]
    assert query["scope"] == ["read"]
    assert query["code_challenge_method"] == ["S256"]
    assert len(query["state"]) == 1
    assert query["state"][0] != "evil"
    assert session.redirect_uri.startswith("http://127.0.0.1:")
    assert session.redirect_uri.endswith("/oauth/callback")


async def test_connect_asks_for_the_union_of_the_enabled_extensions_scopes(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    ctx_b = await oauth_extension(
        broker, tmp_path, api, oauth_block(oauth2_server, ["write", "read"]), ext_id="com.example.other"
    )
    assert connect_plan(broker.home, "cal", "ws").scopes == ("read", "write")
    oauth2_server.configure(scope="read write")
    grant = await sign_in(broker)
    assert grant.scopes == ("read", "write")
    assert (await broker.call(ctx_b, "api", "get", {"route": "echo"}))["ok"]


async def test_extensions_declaring_different_urls_cannot_connect(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    other = oauth_block(oauth2_server, ["read"], token_url=f"http://localhost:{oauth2_server.port}/token")
    await oauth_extension(broker, tmp_path, api, other, ext_id="com.example.other")
    with pytest.raises(ConnectError, match="other sign-in URLs for service 'cal' than its profile"):
        await start_connect(broker.home, broker.credentials, "cal", "ws")


async def test_a_grant_with_undeclared_scopes_is_refused_and_not_kept(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read admin")
    with pytest.raises(ConnectError, match="admin"):
        await sign_in(broker)
    assert load_grant(broker.credentials, "cal") is None


async def test_a_call_whose_declared_scope_was_not_granted_is_refused(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    ctx = await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read", "write"]))
    oauth2_server.configure(scope="read")
    await sign_in(broker)
    result = await broker.call(ctx, "api", "get", {"route": "echo"})
    assert code(result) == "refused"
    assert "write" in result["error"]["message"]
    assert api.seen == []


async def test_a_connection_with_another_token_url_or_none_is_refused(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read")
    await sign_in(broker)
    other = oauth_block(oauth2_server, ["read"], token_url=f"http://localhost:{oauth2_server.port}/token")
    ctx_other = await oauth_extension(broker, tmp_path, api, other, ext_id="com.example.other")
    ctx_plain = await oauth_extension(broker, tmp_path, api, None, ext_id="com.example.plain")
    assert code(await broker.call(ctx_other, "api", "get", {"route": "echo"})) == "refused"
    assert code(await broker.call(ctx_plain, "api", "get", {"route": "echo"})) == "refused"
    assert api.seen == []


async def test_concurrent_calls_near_expiry_share_one_refresh(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    ctx = await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read", expires_in=30)  # inside Helm's refresh margin
    first = await sign_in(broker)
    before = oauth2_server.stats()["token"]
    results = await asyncio.gather(*(broker.call(ctx, "api", "get", {"route": "echo"}) for _ in range(5)))
    assert all(r["ok"] for r in results), results
    assert oauth2_server.stats()["token"] == before + 1
    refreshed = load_grant(broker.credentials, "cal")
    assert refreshed is not None
    assert refreshed.expires_at is not None
    assert first.expires_at is not None
    assert refreshed.expires_at > first.expires_at  # (the server may mint the same JWT within a second)
    assert {s.headers["authorization"] for s in api.seen} == {f"Bearer {refreshed.access_token}"}


async def test_invalid_grant_on_refresh_is_not_authorized_and_reconnecting_keeps_the_profile(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    ctx = await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read", expires_in=30)
    await sign_in(broker)
    oauth2_server.revoke_refresh_tokens()
    assert code(await broker.call(ctx, "api", "get", {"route": "echo"})) == "not_authorized"
    assert load_grant(broker.credentials, "cal") is None
    assert SERVICES.store(broker.home).get("cal") is not None
    oauth2_server.configure(scope="read", expires_in=3600)
    await sign_in(broker)
    assert (await broker.call(ctx, "api", "get", {"route": "echo"}))["ok"]


async def test_a_callback_with_the_wrong_state_is_ignored_and_the_listener_keeps_waiting(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read")
    session = await start_connect(broker.home, broker.credentials, "cal", "ws")
    async with session:
        forged = await browse(f"{session.redirect_uri}?code=stolen&state=wrong")
        assert forged.status_code == 400
        elsewhere = await browse(session.redirect_uri.replace("/oauth/callback", "/favicon.ico"))
        assert elsewhere.status_code == 404
        assert (await browse(session.authorize_url)).status_code == 200
        grant = await session.wait(10)
    assert grant.scopes == ("read",)


async def test_the_listener_is_single_use_and_closes_after_the_answer(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    oauth2_server.configure(scope="read")
    session = await start_connect(broker.home, broker.credentials, "cal", "ws")
    async with session:
        await browse(session.authorize_url)
        await session.wait(10)
        with pytest.raises(httpx.ConnectError):
            await browse(f"{session.redirect_uri}?code=again&state={state_of(session)}")


async def test_a_provider_error_ends_the_sign_in(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    session = await start_connect(broker.home, broker.credentials, "cal", "ws")
    async with session:
        await browse(f"{session.redirect_uri}?error=access_denied&state={state_of(session)}")
        with pytest.raises(ConnectError, match="access_denied"):
            await session.wait(10)


async def test_waiting_times_out_and_cancel_ends_a_pending_wait(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
    session = await start_connect(broker.home, broker.credentials, "cal", "ws")
    with pytest.raises(ConnectError, match="within"):
        await session.wait(0.1)
    session = await start_connect(broker.home, broker.credentials, "cal", "ws")
    waiting = asyncio.ensure_future(session.wait(30))
    await asyncio.sleep(0)  # let the wait start
    await session.cancel()
    with pytest.raises(ConnectError, match="cancelled"):
        await asyncio.wait_for(waiting, 5)
    with pytest.raises(httpx.ConnectError):
        await browse(session.redirect_uri)


async def test_the_code_is_exchanged_with_pkce_and_client_secret_post(
    broker: Broker, tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    async with hostile_server() as token_endpoint:
        oauth = oauth_block(oauth2_server, ["read"], token_url=f"{token_endpoint.url}/token")
        await oauth_extension(broker, tmp_path, api, oauth)
        session = await start_connect(broker.home, broker.credentials, "cal", "ws")
        async with session:
            await browse(session.authorize_url)
            await session.wait(10)
        form = {k: v[0] for k, v in parse_qs(token_endpoint.last.body.decode()).items()}
    assert token_endpoint.last.request_line == "POST /token HTTP/1.1"
    assert "authorization" not in token_endpoint.last.headers
    assert form["grant_type"] == "authorization_code"
    assert form["client_id"] == "helm-test"
    assert form["client_secret"] == SECRET
    assert form["redirect_uri"] == session.redirect_uri
    assert len(form["code_verifier"]) >= 43


async def test_helm_service_connect_signs_in_from_the_command_line(
    tmp_path: Path, api: Hostile, oauth2_server: OAuth2Server
):
    home = tmp_path / "home"
    async with new_broker(home) as broker:
        await oauth_extension(broker, tmp_path, api, oauth_block(oauth2_server, ["read"]))
        oauth2_server.configure(scope="read")
    helm = str(Path(__file__).resolve().parents[3] / ".venv" / "bin" / "helm")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    proc = await asyncio.create_subprocess_exec(
        helm, "service", "connect", "cal", "--workspace", "ws", "--no-browser", "--wait", "20",
        "--home", str(home), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    async with asyncio.timeout(20):
        lines = []
        while not (line := (await proc.stdout.readline()).decode()).startswith("open this URL"):
            assert line, (
                f"helm exited early: {lines} {(await proc.stderr.read()).decode() if proc.stderr else ''}"
            )
            lines.append(line)
        await browse(line.split(": ", 1)[1].strip())
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert "connected; scopes: read" in out.decode()
    assert lines[0].startswith("redirect URI: http://127.0.0.1:")
    listed = await asyncio.create_subprocess_exec(
        helm, "service", "list", "--json", "--home", str(home), stdout=asyncio.subprocess.PIPE, env=env
    )
    rows = json.loads((await listed.communicate())[0])
    assert rows[0]["connection"]["connected"] is True
    assert "access_token" not in json.dumps(rows)
