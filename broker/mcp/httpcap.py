"""Streamable HTTP for MCP with every response message bounded in size.

The SDK reads a JSON response whole and an SSE event until its blank line. This module hands
the SDK an ``httpx`` client whose transport counts bytes as they arrive: a JSON body larger
than the limit, or an SSE event larger than it, stops the stream there (memory stays bounded)
and ``on_overflow`` learns which request it answered. It also remembers a 401/403 so the
caller can say the token was refused.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
from mcp import types
from mcp.client.streamable_http import streamable_http_client

from broker.mcp.stdio import OverflowHook, ReadStream, WriteStream


class MessageTooLarge(httpx.ReadError):
    """A response message passed Helm's limit; the rest of the stream was not read."""


@dataclass
class HttpState:
    """What the transport noticed that the SDK does not report."""

    auth_refused: bool = False


class _CappedStream(httpx.AsyncByteStream):
    def __init__(
        self,
        inner: httpx.AsyncByteStream,
        limit: int,
        sse: bool,
        rid: types.RequestId | None,
        hook: OverflowHook,
    ) -> None:
        self._inner, self._limit, self._sse, self._rid, self._hook = inner, limit, sse, rid, hook

    async def __aiter__(self) -> AsyncIterator[bytes]:
        run = 0  # bytes of the current message (the whole body, or the current SSE event)
        async for chunk in self._inner:
            end = max(chunk.rfind(b"\n\n"), chunk.rfind(b"\r\n\r\n")) if self._sse else -1
            run = len(chunk) - end - 2 if end >= 0 else run + len(chunk)
            if run > self._limit:
                self._hook(self._rid)
                raise MessageTooLarge("response message larger than the limit")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _request_id(request: httpx.Request) -> types.RequestId | None:
    try:
        body = json.loads(request.content) if request.content else None
    except (ValueError, httpx.RequestNotRead):
        return None
    rid = body.get("id") if isinstance(body, dict) else None
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


class _CappedTransport(httpx.AsyncBaseTransport):
    def __init__(self, limit: int, hook: OverflowHook, state: HttpState) -> None:
        self._inner = httpx.AsyncHTTPTransport(retries=0)
        self._limit, self._hook, self._state = limit, hook, state

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if response.status_code in (401, 403):
            self._state.auth_refused = True
        sse = response.headers.get("content-type", "").lower().startswith("text/event-stream")
        assert isinstance(response.stream, httpx.AsyncByteStream)
        stream = _CappedStream(response.stream, self._limit, sse, _request_id(request), self._hook)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextlib.asynccontextmanager
async def open_http(
    url: str, token: str | None, max_message: int, on_overflow: OverflowHook, state: HttpState
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Yield the SDK's two streams for a streamable HTTP endpoint, bearer token attached."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = httpx.AsyncClient(
        transport=_CappedTransport(max_message, on_overflow, state),
        headers=headers,
        timeout=httpx.Timeout(30.0, read=300.0),
        follow_redirects=False,
        trust_env=False,  # the user's proxy variables are for their shell, not for Helm's tokens
    )
    async with client, streamable_http_client(url, http_client=client) as (read, write, _session_id):
        yield read, write
