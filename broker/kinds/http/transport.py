"""Sending one request with the contract's limits, and reading the answer safely.

* One ``httpx.AsyncClient`` per broker, built so nothing is taken implicitly: no cookie jar
  (a policy that refuses every cookie), ``trust_env=False`` (no proxy, ``.netrc`` or CA
  override from the environment), redirects never followed.
* The body is read raw and decompressed here, with ``max_length``, so a server can never make
  Helm hold more than the limit: not with an endless body, a lying Content-Length, or a
  compression bomb (1 MiB is enforced on the wire and again after decompression).
* The whole exchange — connect, send, every byte of the answer — runs under one deadline.
* Library errors become contract codes here; messages are Helm's own and never name the host.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx

from broker.errors import CallError, ErrorCode
from broker.netcause import cause

MAX_BODY = 1024 * 1024
CALL_TIMEOUT = 10.0
ACCEPT_ENCODING = "gzip, deflate"


class _NoCookies(DefaultCookiePolicy):
    """Refuses to store or send any cookie: calls must not share state through cookies."""

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Any, request: Any) -> bool:
        return False


def new_client(accept: str = "application/json", timeout: httpx.Timeout | None = None) -> httpx.AsyncClient:
    """A client that sends nothing it was not given (``accept``: what every request accepts)."""
    return httpx.AsyncClient(
        trust_env=False,
        follow_redirects=False,
        cookies=CookieJar(policy=_NoCookies()),
        timeout=timeout or httpx.Timeout(CALL_TIMEOUT),
        limits=httpx.Limits(max_connections=32, max_keepalive_connections=8),
        headers={"User-Agent": "Helm", "Accept": accept, "Accept-Encoding": ACCEPT_ENCODING},
    )


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes
    location: str = ""
    """The ``Location`` header (a redirect's target, for whoever decides whether to follow it)."""


def over(limit: int) -> str:
    """The refusal of an answer larger than ``limit``."""
    mib = 1024 * 1024
    amount = f"{limit // mib} MiB" if limit % mib == 0 else f"{limit} bytes"
    return f"the response is larger than {amount}"


class _Decoder:
    """Decompresses one declared encoding, never producing more than ``limit`` bytes."""

    def __init__(self, encoding: str, limit: int) -> None:
        self.limit = limit
        self.out = 0
        wbits = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
        self._z = None if encoding in ("", "identity") else zlib.decompressobj(wbits[encoding])
        self._raw_deflate = encoding == "deflate"

    def feed(self, data: bytes) -> bytes:
        if self._z is None:
            return self._count(data)
        try:
            chunk = self._z.decompress(data, self.limit - self.out + 1)
        except zlib.error:
            if not self._raw_deflate or self.out:
                raise
            # Some servers send raw deflate without the zlib header.
            self._z, self._raw_deflate = zlib.decompressobj(-zlib.MAX_WBITS), False
            chunk = self._z.decompress(data, self.limit - self.out + 1)
        return self._count(chunk)

    def _count(self, chunk: bytes) -> bytes:
        self.out += len(chunk)
        if self.out > self.limit:
            raise CallError(ErrorCode.TOO_LARGE, over(self.limit))
        return chunk


def _encoding(headers: httpx.Headers) -> str:
    value = str(headers.get("content-encoding", "")).strip().lower()
    if value not in ("", "identity", "gzip", "x-gzip", "deflate"):
        raise CallError(ErrorCode.NOT_JSON, "the response uses a content encoding Helm does not accept")
    return value


async def _read(response: httpx.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise CallError(ErrorCode.TOO_LARGE, over(limit))
    decoder = _Decoder(_encoding(response.headers), limit)
    received, parts = 0, []
    raw: AsyncIterator[bytes] = response.aiter_raw()
    async for data in raw:
        received += len(data)
        if received > limit:
            raise CallError(ErrorCode.TOO_LARGE, over(limit))
        parts.append(decoder.feed(data))
    return b"".join(parts)


async def exchange(
    client: httpx.AsyncClient,
    method: str,
    url: httpx.URL | str,
    *,
    headers: Mapping[str, str] | None = None,
    content: bytes | None = None,
    data: Mapping[str, str] | None = None,
    limit: int = MAX_BODY,
    seconds: float = CALL_TIMEOUT,
    what: str = "the service",
    extensions: Mapping[str, Any] | None = None,
) -> Answer:
    """Send one request and read its whole answer within ``seconds``. ``what`` names the server
    in messages ("service 'github'"); a failure says why (``broker.netcause``), never the URL."""
    all_headers = dict(headers or {})
    if content is not None:
        all_headers["Content-Type"] = "application/json"
    try:
        async with asyncio.timeout(seconds):
            request = client.build_request(
                method,
                url,
                headers=all_headers,
                content=content,
                data=data,
                extensions=dict(extensions or {}),
            )
            response = await client.send(request, stream=True)
            try:
                body = await _read(response, limit)
            except CallError as err:
                err.status = response.status_code
                raise
            finally:
                await response.aclose()
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise CallError(ErrorCode.TIMEOUT, f"{what} did not answer within {seconds:g} s") from exc
    except zlib.error as exc:
        raise CallError(ErrorCode.NOT_JSON, "the response body could not be decompressed") from exc
    except httpx.RemoteProtocolError as exc:
        raise CallError(ErrorCode.UNAVAILABLE, f"{what} broke off its answer") from exc
    except (httpx.HTTPError, OSError) as exc:
        raise CallError(ErrorCode.UNAVAILABLE, f"{what} could not be reached: {cause(exc)}") from exc
    headers = response.headers
    return Answer(response.status_code, headers.get("content-type", ""), body, headers.get("location", ""))


def is_json_type(content_type: str) -> bool:
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def parse_json(answer: Answer) -> Any:
    """The answer's JSON value; CallError(not_json) if it is not JSON."""
    if answer.content_type and not is_json_type(answer.content_type):
        raise CallError(ErrorCode.NOT_JSON, "the service did not answer with JSON", status=answer.status)
    try:
        return json.loads(answer.body)
    except (ValueError, RecursionError) as exc:
        raise CallError(
            ErrorCode.NOT_JSON, "the service answered with invalid JSON", status=answer.status
        ) from exc


def json_or_none(answer: Answer) -> Any:
    """The answer's JSON value if it is JSON, else None (for error bodies)."""
    try:
        return parse_json(answer) if answer.body else None
    except CallError:
        return None
