"""The OAuth2 loopback listener answers only requests addressed to itself by name.

A web page that rebinds its own host name to 127.0.0.1 can make the browser send requests to
the listener, but the browser still sends that page's host in ``Host``. Such a request is
answered 400 and neither completes nor cancels the sign-in. Real HTTP requests throughout.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from broker.kinds.http.loopback import Callback, CallbackListener

STATE = "state-3c1d9a"


@pytest.fixture
async def listener() -> AsyncIterator[CallbackListener]:
    opened = await CallbackListener.open(STATE)
    try:
        yield opened
    finally:
        await opened.close()


async def get(listener: CallbackListener, query: str, host: str | None = None) -> int:
    headers = {} if host is None else {"Host": host}
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.get(f"{listener.redirect_uri}?{query}", headers=headers)
    return answer.status_code


async def raw(listener: CallbackListener, head: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(head.encode("latin-1"))
    await writer.drain()
    async with asyncio.timeout(5):
        answer = await reader.read()
    writer.close()
    return answer


@pytest.mark.parametrize(
    "host",
    ["rebind.example:{port}", "rebind.example", "127.0.0.1", "127.0.0.1:1", "localhost.example:{port}",
     "127.0.0.1:{port}.example", "[::1]:{port}", "127.0.0.1:{port}:{port}"],
)  # fmt: skip
async def test_a_code_sent_with_a_foreign_host_is_refused_and_the_sign_in_goes_on(
    listener: CallbackListener, host: str
):
    status = await get(listener, f"code=planted&state={STATE}", host.format(port=listener.port))
    assert status == 400
    assert await get(listener, f"code=real&state={STATE}") == 200
    assert await listener.wait(5) == Callback("real", None)


async def test_an_error_sent_with_a_foreign_host_does_not_cancel_the_sign_in(listener: CallbackListener):
    status = await get(listener, f"error=access_denied&state={STATE}", f"rebind.example:{listener.port}")
    assert status == 400
    assert await get(listener, f"code=real&state={STATE}") == 200
    assert await listener.wait(5) == Callback("real", None)


async def test_localhost_with_the_listeners_port_is_accepted(listener: CallbackListener):
    assert await get(listener, f"code=real&state={STATE}", f"LocalHost:{listener.port}") == 200
    assert await listener.wait(5) == Callback("real", None)


@pytest.mark.parametrize(
    "headers",
    ["", "Host: 127.0.0.1:{port}\r\nHost: 127.0.0.1:{port}\r\n", "Host: rebind.example\r\n"],
    ids=["no-host", "two-hosts", "foreign-host"],
)
async def test_a_request_without_exactly_one_loopback_host_is_refused(
    listener: CallbackListener, headers: str
):
    request = f"GET /oauth/callback?code=planted&state={STATE} HTTP/1.1\r\n{headers}\r\n"
    answer = await raw(listener, request.format(port=listener.port))
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert await get(listener, f"code=real&state={STATE}") == 200
    assert await listener.wait(5) == Callback("real", None)
