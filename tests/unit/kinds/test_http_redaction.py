"""A service that echoes what Helm sent never hands the user's token to the extension.

httpbin echoes request headers (``/headers``, ``/anything``) and the bearer token itself
(``/bearer``); the hostile server echoes them in an error body, inside a JSON string and as
object keys. Every form of the token Helm sent becomes ``[redacted by Helm]``, the call still
succeeds (or fails as it would have), and the audit log says which call had a redaction.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker import Broker
from broker.audit import AuditRecord
from broker.redact import REDACTED
from tests.helpers import new_broker
from tests.servers.services import HttpServer
from tests.unit.kinds.http_hostile import Hostile, hostile_server
from tests.unit.kinds.http_setup import TOKEN, code, leaks, service_extension

ANY: dict[str, Any] = {"get": {"method": "GET", "path": "/{route}"}}


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def hostile() -> AsyncIterator[Hostile]:
    async with hostile_server() as s:
        yield s


def redactions(broker: Broker) -> list[AuditRecord]:
    return [r for r in broker.audit.records() if r.decision == "redacted"]


@pytest.mark.parametrize("route", ["headers", "anything"])
async def test_an_echoed_bearer_header_is_redacted_and_the_call_succeeds(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer, route: str
):
    ctx = await service_extension(broker, tmp_path, httpbin_server.url, ANY)
    result = await broker.call(ctx, "api", "get", {"route": route})
    assert result["ok"], result
    assert result["data"]["headers"]["Authorization"] == REDACTED
    assert result["data"]["headers"]["User-Agent"] == "Helm"
    assert not leaks(result, TOKEN)
    [record] = redactions(broker)
    assert (record.workspace, record.extension, record.connection, record.operation) == (
        ctx.workspace, ctx.extension, "api", "get")  # fmt: skip
    assert (record.kind, record.outcome) == ("http", "ok")
    assert TOKEN not in broker.audit.path.read_text()


async def test_a_raw_token_in_its_own_header_is_redacted(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer
):
    ctx = await service_extension(
        broker, tmp_path, httpbin_server.url, ANY, token_format="raw", token_header="X-Api-Key"
    )
    result = await broker.call(ctx, "api", "get", {"route": "headers"})
    assert result["data"]["headers"]["X-Api-Key"] == REDACTED
    assert not leaks(result, TOKEN)


async def test_the_bare_token_inside_an_answer_is_redacted(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer
):
    ctx = await service_extension(broker, tmp_path, httpbin_server.url, ANY)
    result = await broker.call(ctx, "api", "get", {"route": "bearer"})
    assert result["data"] == {"authenticated": True, "token": REDACTED}


async def test_an_error_body_echoing_the_token_is_redacted_everywhere(
    broker: Broker, tmp_path: Path, hostile: Hostile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, ANY)
    result = await broker.call(ctx, "api", "get", {"route": "echo-error"})
    assert code(result) == "http_error"
    assert result["status"] == 401
    data = result["data"]
    assert data["headers"]["authorization"] == REDACTED
    assert json.loads(data["as_text"])["authorization"] == REDACTED
    assert data["by_value"][REDACTED] == "authorization"
    assert not leaks(result, TOKEN)
    [record] = redactions(broker)
    assert record.outcome == "http_error"


async def test_an_answer_without_the_token_is_returned_unchanged_and_not_recorded(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer
):
    ctx = await service_extension(broker, tmp_path, httpbin_server.url, ANY)
    result = await broker.call(ctx, "api", "get", {"route": "json"})
    assert result["ok"]
    assert REDACTED not in json.dumps(result)
    assert redactions(broker) == []
