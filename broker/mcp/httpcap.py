"""Streamable HTTP for MCP with every response message bounded in size.

The SDK reads a JSON response whole. This module hands the SDK an ``httpx2`` client whose
transport counts bytes as they arrive and passes a response on only a whole message at a time:
a JSON body when it has ended, an SSE stream an event at a time. A message larger than the
limit stops the stream there (memory stays bounded) and is replaced by Helm's own error answer
to the request it belonged to, of code ``TOO_LARGE`` (the SDK's session ends that request with
it). It also remembers a 401/403 so the caller can say the token was refused.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx2
from mcp import types
from mcp.client.streamable_http import streamable_http_client

from broker.mcp.stdio import TOO_LARGE, ReadStream, WriteStream

_TOO_LARGE_MESSAGE = "the server's answer was larger than Helm's bound"
_EVENT_END = re.compile(rb"(?:\r\n|\r(?=[^\n])|\n)(?:\r\n|\r(?=[^\n])|\n)")
"""The blank line that ends an SSE event, with any of the line ends SSE allows (a CR is a line
end only once the next byte shows it is not the start of a CRLF)."""


class MessageTooLarge(httpx2.ReadError):
    """A message the SDK did not ask for (on the server's own event stream) passed Helm's
    limit; the rest of that stream was not read."""


@dataclass
class HttpState:
    """What the transport noticed that the SDK does not report."""

    auth_refused: bool = False


def _error_body(rid: types.RequestId) -> bytes:
    error = types.ErrorData(code=TOO_LARGE, message=_TOO_LARGE_MESSAGE)
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=error).model_dump_json(by_alias=True).encode()


class CappedStream(httpx2.AsyncByteStream):
    """A response body passed on a whole message at a time, each at most ``limit`` bytes.

    ``rid`` is the request the response answers (None for the server's own event stream)."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int, sse: bool, rid: types.RequestId | None
    ) -> None:
        self._inner, self._limit, self._sse, self._rid = inner, limit, sse, rid

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._events() if self._sse else self._body()

    async def _body(self) -> AsyncIterator[bytes]:
        # Held until it ends: the SDK reads a JSON body whole anyway, so this costs no more.
        held: list[bytes] = []
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                yield self._too_large()
                return
            held.append(chunk)
        for chunk in held:
            yield chunk

    async def _events(self) -> AsyncIterator[bytes]:
        held = bytearray()  # the event under way, not passed on until its blank line
        async for chunk in self._inner:
            start = max(0, len(held) - 4)  # a blank line may span two chunks
            held += chunk
            end, over = 0, False
            for found in _EVENT_END.finditer(held, start):
                over = found.end() - end > self._limit
                if over:
                    break
                end = found.end()
            if end:
                yield bytes(held[:end])
                del held[:end]
            if over or len(held) > self._limit:
                yield self._too_large(b"event: message\ndata: ", b"\n\n")
                return
        if held:
            yield bytes(held)

    def _too_large(self, before: bytes = b"", after: bytes = b"") -> bytes:
        if self._rid is None:
            raise MessageTooLarge("a message larger than the limit")
        return before + _error_body(self._rid) + after

    async def aclose(self) -> None:
        await self._inner.aclose()


def _request_id(request: httpx2.Request) -> types.RequestId | None:
    try:
        body = json.loads(request.content) if request.content else None
    except (ValueError, httpx2.RequestNotRead):
        return None
    rid = body.get("id") if isinstance(body, dict) else None
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


class _CappedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, limit: int, state: HttpState) -> None:
        # Certificates: the system's trust store, or SSL_CERT_FILE / SSL_CERT_DIR when set.
        self._inner = httpx2.AsyncHTTPTransport(retries=0)
        self._limit, self._state = limit, state

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if response.status_code in (401, 403):
            self._state.auth_refused = True
        sse = response.headers.get("content-type", "").lower().startswith("text/event-stream")
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        stream = CappedStream(response.stream, self._limit, sse, _request_id(request))
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextlib.asynccontextmanager
async def open_http(
    url: str, token: str | None, max_message: int, state: HttpState
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Yield the SDK's two streams for a streamable HTTP endpoint, bearer token attached."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = httpx2.AsyncClient(
        transport=_CappedTransport(max_message, state),
        headers=headers,
        timeout=httpx2.Timeout(30.0, read=300.0),
        follow_redirects=False,
        trust_env=False,  # the user's proxy variables are for their shell, not for Helm's tokens
    )
    # The SDK's own bound on an SSE event is Helm's too (an event passes it only whole).
    async with (
        client,
        streamable_http_client(url, http_client=client, max_sse_event_size=max_message) as (read, write),
    ):
        yield read, write
