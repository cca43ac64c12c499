"""Each test server fixture starts a real server that answers on 127.0.0.1 only."""

from __future__ import annotations

import base64
import hashlib
import secrets
import subprocess
import urllib.parse

import aiomysql
import asyncpg
import httpx
import pymysql
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.servers.databases import SEED_ROWS, DatabaseServer
from tests.servers.services import HttpServer, JsonServer, McpHttpServer, OAuth2Server
from tests.support import require

SEED_NAMES = sorted(name for name, _ in SEED_ROWS)


def listening_addresses(port: int) -> set[str]:
    require("ss", "ss (Debian package iproute2) is needed to inspect listening sockets")
    out = subprocess.run(["ss", "-Hltn"], capture_output=True, text=True, check=True).stdout
    found = set()
    for line in out.splitlines():
        local = line.split()[3]
        host, _, local_port = local.rpartition(":")
        if local_port == str(port):
            found.add(host)
    return found


async def test_postgres_read_only_role_reads_but_cannot_write(postgres_server: DatabaseServer):
    conn = await asyncpg.connect(postgres_server.dsn("helm_ro"))
    try:
        rows = await conn.fetch("SELECT name FROM items ORDER BY name")
        assert [r["name"] for r in rows] == SEED_NAMES
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("INSERT INTO items (name, qty) VALUES ('log', 1)")
    finally:
        await conn.close()
    assert listening_addresses(postgres_server.port) == {"127.0.0.1"}


async def test_postgres_read_write_role_writes_rows(postgres_server: DatabaseServer):
    conn = await asyncpg.connect(**postgres_server.connect_kwargs("helm_rw"))
    try:
        async with conn.transaction():
            await conn.execute("INSERT INTO items (name, qty) VALUES ('chart', 2)")
            assert await conn.fetchval("SELECT qty FROM items WHERE name = 'chart'") == 2
            await conn.execute("DELETE FROM items WHERE name = 'chart'")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("CREATE TABLE not_allowed (id int)")
    finally:
        await conn.close()


async def test_mariadb_read_only_user_reads_but_cannot_write(mariadb_server: DatabaseServer):
    conn = await aiomysql.connect(**mariadb_server.connect_kwargs("helm_ro"))
    try:
        async with conn.cursor() as cur:
            await cur.execute("SELECT name FROM items ORDER BY name")
            assert [r[0] for r in await cur.fetchall()] == SEED_NAMES
            with pytest.raises(pymysql.err.OperationalError) as denied:
                await cur.execute("INSERT INTO items (name, qty) VALUES ('log', 1)")
            assert denied.value.args[0] == 1142  # command denied to user
    finally:
        conn.close()
    assert listening_addresses(mariadb_server.port) == {"127.0.0.1"}


async def test_mariadb_read_write_user_writes_rows(mariadb_server: DatabaseServer):
    conn = await aiomysql.connect(**mariadb_server.connect_kwargs("helm_rw"), autocommit=False)
    try:
        async with conn.cursor() as cur:
            await cur.execute("INSERT INTO items (name, qty) VALUES ('chart', 2)")
            await cur.execute("SELECT qty FROM items WHERE name = 'chart'")
            assert await cur.fetchone() == (2,)
        await conn.rollback()
    finally:
        conn.close()


async def test_json_server_serves_and_resets_its_data(json_server: JsonServer):
    async with httpx.AsyncClient(base_url=json_server.url) as client:
        created = await client.post("/items", json={"name": "chart", "qty": 2})
        assert created.status_code == 201
        assert len((await client.get("/items")).json()) == 4
        json_server.reset()
        assert [i["name"] for i in (await client.get("/items")).json()] == SEED_NAMES
    assert listening_addresses(json_server.port) == {"127.0.0.1"}


async def test_httpbin_echoes_requests(httpbin_server: HttpServer):
    async with httpx.AsyncClient(base_url=httpbin_server.url) as client:
        response = await client.get("/get", params={"q": "helm"})
    assert response.status_code == 200
    assert response.json()["args"] == {"q": "helm"}
    assert listening_addresses(httpbin_server.port) == {"127.0.0.1"}


def _pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def _authorize(client: httpx.AsyncClient, server: OAuth2Server, challenge: str) -> str:
    response = await client.get(
        server.authorization_endpoint,
        params={
            "response_type": "code",
            "client_id": "helm",
            "redirect_uri": "http://127.0.0.1:1/callback",
            "scope": "read write",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s1",
        },
    )
    assert response.status_code == 302
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(response.headers["location"]).query)
    assert query["state"] == ["s1"]
    return query["code"][0]


def _token_form(code: str, verifier: str) -> dict[str, str]:
    return {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "client_id": "helm",
        "redirect_uri": "http://127.0.0.1:1/callback",
    }


async def test_oauth2_server_publishes_discovery_and_keys(oauth2_server: OAuth2Server):
    async with httpx.AsyncClient() as client:
        discovery = (await client.get(f"{oauth2_server.url}/.well-known/openid-configuration")).json()
        keys = (await client.get(oauth2_server.jwks_uri)).json()["keys"]
    assert discovery["issuer"] == oauth2_server.issuer
    assert discovery["token_endpoint"] == oauth2_server.token_endpoint
    assert "S256" in discovery["code_challenge_methods_supported"]
    assert keys
    assert keys[0]["kty"] == "RSA"
    assert listening_addresses(oauth2_server.port) == {"127.0.0.1"}


async def test_oauth2_server_checks_pkce_and_accepts_a_code_once(oauth2_server: OAuth2Server):
    oauth2_server.configure(scope="read")
    verifier, challenge = _pkce_pair()
    async with httpx.AsyncClient() as client:
        wrong = await client.post(
            oauth2_server.token_endpoint,
            data=_token_form(await _authorize(client, oauth2_server, challenge), "x" * 50),
        )
        assert wrong.status_code == 400
        code = await _authorize(client, oauth2_server, challenge)
        good = await client.post(oauth2_server.token_endpoint, data=_token_form(code, verifier))
        assert good.status_code == 200
        assert good.json()["scope"] == "read"
        again = await client.post(oauth2_server.token_endpoint, data=_token_form(code, verifier))
        assert again.status_code == 400
        assert again.json()["error"] == "invalid_grant"
        refreshed = await client.post(
            oauth2_server.token_endpoint,
            data={"grant_type": "refresh_token", "refresh_token": good.json()["refresh_token"]},
        )
        assert refreshed.status_code == 200
        oauth2_server.revoke_refresh_tokens()
        revoked = await client.post(
            oauth2_server.token_endpoint,
            data={"grant_type": "refresh_token", "refresh_token": good.json()["refresh_token"]},
        )
        assert revoked.status_code == 400


async def _stdio_tool_names(command: list[str]) -> set[str]:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return {tool.name for tool in (await session.list_tools()).tools}


async def test_everything_server_lists_tools_over_stdio(everything_stdio_command: list[str]):
    assert "echo" in await _stdio_tool_names(everything_stdio_command)


async def test_everything_server_lists_tools_over_http_on_loopback_only(
    everything_http_server: McpHttpServer,
):
    async with (
        streamable_http_client(everything_http_server.mcp_url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
    assert "echo" in names
    assert listening_addresses(everything_http_server.port) == {"127.0.0.1"}


async def test_time_server_lists_its_tools(mcp_time_command: list[str]):
    assert "get_current_time" in await _stdio_tool_names(mcp_time_command)


async def test_git_server_lists_its_tools(mcp_git_command: list[str]):
    assert "git_log" in await _stdio_tool_names(mcp_git_command)


def test_keyring_is_a_real_secret_service_inside_the_test_session(keyring_available: bool):
    require(keyring_available, "no Secret Service: run the tests through scripts/check.sh")
    import keyring
    from keyring.backends import SecretService

    backend = SecretService.Keyring()
    backend.set_password("helm-test", "probe", "value")
    try:
        assert backend.get_password("helm-test", "probe") == "value"
        assert keyring.get_keyring().priority >= 1
    finally:
        backend.delete_password("helm-test", "probe")
