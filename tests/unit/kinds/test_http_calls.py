"""http calls against real servers: json-server for REST reads and writes, httpbin for
redirects, status codes and non-JSON bodies, and the hostile server for what no real server
does on purpose. Every error code of the kind is provoked for real."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, Decision
from tests.helpers import ScriptedConfirmer, new_broker
from tests.servers.services import HttpServer, JsonServer
from tests.servers.tls import BODY, tls_server
from tests.support import free_port
from tests.unit.kinds.http_hostile import Hostile, hostile_server
from tests.unit.kinds.http_setup import TOKEN, code, leaks, service_extension

ITEMS: dict[str, Any] = {
    "list": {"method": "GET", "path": "/items", "query": {"name": "{name}"}},
    "get": {"method": "GET", "path": "/items/{id}"},
    "add": {"method": "POST", "path": "/items", "body": {"name": "{name}", "qty": "{qty}"}, "write": True},
    "rename": {"method": "PATCH", "path": "/items/{id}", "body": {"name": "{name}"}, "write": True},
    "drop": {"method": "DELETE", "path": "/items/{id}", "write": True},
}
ANY: dict[str, Any] = {"get": {"method": "GET", "path": "/{route}"}}


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def hostile() -> AsyncIterator[Hostile]:
    async with hostile_server() as s:
        yield s


def items(server: JsonServer) -> list[dict[str, Any]]:
    return list(json.loads(server.db_path.read_text())["items"])


# -- reads and writes on a real REST server ----------------------------------------------
async def test_a_read_returns_the_json_body_and_status(
    broker: Broker, tmp_path: Path, json_server: JsonServer
):
    ctx = await service_extension(broker, tmp_path, json_server.url, ITEMS, write=True)
    result = await broker.call(ctx, "api", "list", {"name": "compass"})
    assert result == {
        "ok": True,
        "status": 200,
        "data": [{"id": 2, "name": "compass", "qty": 1}],
        "error": None,
    }
    everything = await broker.call(ctx, "api", "list", {})
    assert len(everything["data"]) == 3


async def test_a_confirmed_write_is_sent_once_and_changes_the_server(
    broker: Broker, tmp_path: Path, json_server: JsonServer
):
    ctx = await service_extension(broker, tmp_path, json_server.url, ITEMS, write=True)
    confirm = ScriptedConfirmer(Decision.CONFIRMED)
    added = await broker.request(ctx, "api", "add", {"name": "rope", "qty": 4}, confirm)
    assert added["status"] == 201
    assert added["data"]["name"] == "rope"
    assert confirm.shown[0].request == f'POST {json_server.url}/items\n\n{{"name":"rope","qty":4}}'
    renamed = await broker.request(ctx, "api", "rename", {"id": 1, "name": "kedge"}, confirm)
    assert renamed["data"] == {"id": 1, "name": "kedge", "qty": 3}
    dropped = await broker.request(ctx, "api", "drop", {"id": 3}, confirm)
    assert dropped["status"] == 200
    assert sorted(i["name"] for i in items(json_server)) == ["compass", "kedge", "rope"]


async def test_a_declined_write_sends_nothing(broker: Broker, tmp_path: Path, json_server: JsonServer):
    ctx = await service_extension(broker, tmp_path, json_server.url, ITEMS, write=True)
    result = await broker.request(ctx, "api", "drop", {"id": 1}, ScriptedConfirmer(Decision.DECLINED))
    assert code(result) == "declined"
    assert len(items(json_server)) == 3


async def test_a_write_without_a_token_returns_confirmation_required(
    broker: Broker, tmp_path: Path, json_server: JsonServer
):
    ctx = await service_extension(broker, tmp_path, json_server.url, ITEMS, write=True)
    assert code(await broker.call(ctx, "api", "drop", {"id": 1})) == "confirmation_required"
    summary = await broker.describe_write(ctx, "api", "drop", {"id": 1})
    other = await broker.call(ctx, "api", "drop", {"id": 2}, confirmation=summary.token)
    assert code(other) == "confirmation_required"
    assert len(items(json_server)) == 3


async def test_a_non_2xx_status_is_an_http_error_carrying_the_json_body(
    broker: Broker, tmp_path: Path, json_server: JsonServer
):
    ctx = await service_extension(broker, tmp_path, json_server.url, ITEMS, write=True)
    result = await broker.call(ctx, "api", "get", {"id": 999})
    error = {"code": "http_error", "message": "the service answered HTTP 404"}
    assert result == {"ok": False, "status": 404, "data": {}, "error": error}


# -- httpbin: redirects, statuses, encodings, cookies ------------------------------------
@pytest.mark.parametrize(
    ("route", "expected", "status"),
    [
        ("redirect/1", "redirect", 302),
        ("status/301", "redirect", 301),
        ("status/307", "redirect", 307),
        ("html", "not_json", 200),
        ("robots.txt", "not_json", 200),
        ("status/500", "http_error", 500),
        ("status/401", "http_error", 401),
        ("brotli", "not_json", 200),
    ],
)
async def test_httpbin_answers_map_to_contract_codes(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer, route: str, expected: str, status: int
):
    ctx = await service_extension(broker, tmp_path, httpbin_server.url, ANY)
    result = await broker.call(ctx, "api", "get", {"route": route})
    assert code(result) == expected, result
    assert result["status"] == status
    assert not leaks(result, httpbin_server.url, f":{httpbin_server.port}", TOKEN)


@pytest.mark.parametrize("route", ["gzip", "deflate", "json"])
async def test_compressed_json_is_decoded(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer, route: str
):
    ctx = await service_extension(broker, tmp_path, httpbin_server.url, ANY)
    result = await broker.call(ctx, "api", "get", {"route": route})
    assert result["ok"], result


async def test_cookies_a_service_sets_are_never_sent_back(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer
):
    calls = {"set": {"method": "GET", "path": "/cookies/set", "query": {"session": "{v}"}}, **ANY}
    ctx = await service_extension(broker, tmp_path, httpbin_server.url, calls)
    assert code(await broker.call(ctx, "api", "set", {"v": "abc"})) == "redirect"
    result = await broker.call(ctx, "api", "get", {"route": "cookies"})
    assert result["data"] == {"cookies": {}}


# -- what Helm sends -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fmt", "header", "sent"),
    [("bearer", "Authorization", f"Bearer {TOKEN}"), ("raw", "X-Api-Key", TOKEN)],
)
async def test_the_token_is_sent_in_the_profile_header_and_format(
    broker: Broker, tmp_path: Path, hostile: Hostile, fmt: str, header: str, sent: str
):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY, token_format=fmt, token_header=header)
    result = await broker.call(ctx, "api", "get", {"route": "echo"})
    assert hostile.last.headers[header.lower()] == sent
    assert not leaks(result, TOKEN)
    assert set(hostile.last.headers) == {
        "host",
        "accept",
        "accept-encoding",
        "connection",
        "user-agent",
        header.lower(),
    }


async def test_no_proxy_or_netrc_is_taken_from_the_environment(
    broker: Broker, tmp_path: Path, hostile: Hostile, monkeypatch: pytest.MonkeyPatch
):
    async with hostile_server() as proxy:
        for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(var, proxy.url)
        netrc = tmp_path / "netrc"
        netrc.write_text("machine 127.0.0.1 login user password from-netrc\n")
        netrc.chmod(0o600)
        monkeypatch.setenv("NETRC", str(netrc))
        ctx = await service_extension(broker, tmp_path, hostile.url, ANY, token=None)
        assert (await broker.call(ctx, "api", "get", {"route": "echo"}))["ok"]
        assert proxy.seen == []
    assert "authorization" not in hostile.last.headers


async def test_an_empty_2xx_answer_has_null_data(broker: Broker, tmp_path: Path, hostile: Hostile):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY)
    assert await broker.call(ctx, "api", "get", {"route": "no-content"}) == {
        "ok": True, "status": 204, "data": None, "error": None}  # fmt: skip


# -- hostile answers -------------------------------------------------------------------------
@pytest.mark.parametrize("route", ["endless", "bomb", "huge-length"])
async def test_oversized_answers_are_too_large_with_bounded_memory(
    broker: Broker, tmp_path: Path, hostile: Hostile, route: str
):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY)
    tracemalloc.start()
    try:
        result = await broker.call(ctx, "api", "get", {"route": route})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code(result) == "too_large", result
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes while refusing {route}"


async def test_a_body_shorter_than_its_content_length_is_unavailable(
    broker: Broker, tmp_path: Path, hostile: Hostile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY)
    assert code(await broker.call(ctx, "api", "get", {"route": "long-length"})) == "unavailable"


async def test_bytes_beyond_the_content_length_are_not_read_as_the_answer(
    broker: Broker, tmp_path: Path, hostile: Hostile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY)
    result = await broker.call(ctx, "api", "get", {"route": "short-length"})
    assert result == {"ok": True, "status": 200, "data": {}, "error": None}
    after = await broker.call(ctx, "api", "get", {"route": "echo"})
    assert after["ok"], "the lying connection must not be reused"


async def test_a_dripping_body_times_out_after_10_seconds(broker: Broker, tmp_path: Path, hostile: Hostile):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY)
    started = time.monotonic()
    result = await broker.call(ctx, "api", "get", {"route": "drip"})
    elapsed = time.monotonic() - started
    assert code(result) == "timeout"
    assert 9.5 < elapsed < 12


async def test_nothing_listening_is_unavailable_without_naming_the_host(broker: Broker, tmp_path: Path):
    base = f"http://127.0.0.1:{free_port()}"
    ctx = await service_extension(broker, tmp_path, base, ANY)
    result = await broker.call(ctx, "api", "get", {"route": "x"})
    assert code(result) == "unavailable"
    assert not leaks(result, base, "127.0.0.1", TOKEN)
    assert result["error"]["message"] == (
        "service 'svc' could not be reached: the connection was refused "
        "(nothing listens there, or a firewall said no)"
    )


async def test_a_certificate_no_one_trusts_is_named_as_the_cause(broker: Broker, tmp_path: Path):
    with tls_server(tmp_path) as base:
        ctx = await service_extension(broker, tmp_path, base, ANY)
        result = await broker.call(ctx, "api", "get", {"route": "x"})
    assert code(result) == "unavailable"
    assert (
        result["error"]["message"]
        == "service 'svc' could not be reached: its TLS certificate was not accepted"
    )
    assert not leaks(result, base, "127.0.0.1", TOKEN, BODY.decode())


async def test_a_call_to_a_missing_profile_is_not_configured(
    broker: Broker, tmp_path: Path, hostile: Hostile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY)
    broker.home.settings()  # the profile exists now; remove it as the user would
    with broker.home.update() as settings:
        settings.profiles("services").clear()
    assert code(await broker.call(ctx, "api", "get", {"route": "x"})) == "not_configured"
    assert hostile.seen == []
