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


async def raw_eof(listener: CallbackListener, head: bytes) -> bytes:
    """Sends ``head`` and ends the request there (the listener sees the end of the stream)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(head)
    writer.write_eof()
    async with asyncio.timeout(5):
        answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer


async def test_a_request_cut_short_is_answered_400_and_the_sign_in_goes_on(listener: CallbackListener):
    answer = await raw_eof(listener, f"GET /oauth/callback?code=x&state={STATE} HTTP/1.1\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert await get(listener, f"code=real&state={STATE}") == 200
    assert await listener.wait(5) == Callback("real", None)


async def test_a_request_head_over_8_kib_is_answered_400_and_ignored(listener: CallbackListener):
    head = f"GET /oauth/callback?code=x&state={STATE} HTTP/1.1\r\nHost: 127.0.0.1:{listener.port}\r\n"
    padded = head + "X-Pad: " + "a" * (8 * 1024 + 1 - len(head) - 11) + "\r\n\r\n"
    assert len(padded) == 8 * 1024 + 1
    answer = await raw_eof(listener, padded.encode())
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert await get(listener, f"code=real&state={STATE}") == 200


async def test_once_answered_the_listener_takes_no_further_connection(listener: CallbackListener):
    assert await get(listener, f"code=real&state={STATE}") == 200
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", listener.port)
    assert await listener.wait(5) == Callback("real", None)


async def test_a_closed_listener_takes_no_connection_and_its_wait_is_cancelled():
    opened = await CallbackListener.open(STATE)
    port = opened.port
    await opened.close()
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", port)
    with pytest.raises(asyncio.CancelledError):
        await opened.wait(5)


@pytest.mark.parametrize(
    "query", ["code=planted&state=other", "code=planted", "code=planted&state=", "error=x&state=s"]
)
async def test_an_answer_without_the_sign_ins_state_is_refused_and_the_sign_in_goes_on(
    listener: CallbackListener, query: str
):
    assert await get(listener, query) == 400
    assert await get(listener, f"code=real&state={STATE}") == 200
    assert await listener.wait(5) == Callback("real", None)


async def page(listener: CallbackListener, query: str) -> str:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.get(f"{listener.redirect_uri}?{query}")
    assert answer.status_code == 200
    return answer.text


@pytest.mark.parametrize(
    ("query", "callback", "said"),
    [
        ("code=c1", Callback("c1", None), "Helm received the sign-in."),
        ("error=access_denied", Callback(None, "access_denied"), "The sign-in did not complete."),
        ("code=c1&error=server_error", Callback("c1", "server_error"), "The sign-in did not complete."),
        ("code=&error=", Callback(None, "no_code"), "The sign-in did not complete."),
    ],
)
async def test_the_answer_with_the_right_state_ends_the_sign_in_and_says_how(
    listener: CallbackListener, query: str, callback: Callback, said: str
):
    assert said in await page(listener, f"{query}&state={STATE}")
    assert await listener.wait(5) == callback


@pytest.mark.parametrize(
    "head",
    [
        "GET /other?code=x&state={state} HTTP/1.1",
        "POST /oauth/callback?code=x&state={state} HTTP/1.1",
        "GET /oauth/callback",
    ],
)
async def test_any_other_request_is_answered_404_and_the_sign_in_goes_on(
    listener: CallbackListener, head: str
):
    request = head.format(state=STATE) + f"\r\nHost: 127.0.0.1:{listener.port}\r\n\r\n"
    answer = await raw_eof(listener, request.encode())
    assert answer.startswith(b"HTTP/1.1 404 Not Found\r\n")
    assert await get(listener, f"code=real&state={STATE}") == 200
    assert await listener.wait(5) == Callback("real", None)


async def test_a_request_head_of_exactly_8_kib_is_read(listener: CallbackListener):
    head = f"GET /oauth/callback?code=c&state={STATE} HTTP/1.1\r\nHost: 127.0.0.1:{listener.port}\r\nX-Pad: "
    request = head + "a" * (8 * 1024 - len(head) - 4) + "\r\n\r\n"
    assert len(request) == 8 * 1024
    answer = await raw_eof(listener, request.encode())
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert await listener.wait(5) == Callback("c", None)


async def test_a_listener_whose_wait_ran_out_is_closed(listener: CallbackListener):
    with pytest.raises(TimeoutError):
        await listener.wait(0)
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", listener.port)
