"""A small HTTP server that misbehaves on purpose, and records every request line it gets.

No real server sends an endless body, drips a byte at a time, serves a compression bomb or
lies about Content-Length on purpose, so this one does. It runs in the test's own event loop
on 127.0.0.1 with an OS-assigned port, and speaks just enough HTTP/1.1 by hand that nothing
smooths over its lies.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Writer = asyncio.StreamWriter


@dataclass
class Seen:
    request_line: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Hostile:
    port: int
    seen: list[Seen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def last(self) -> Seen:
        return self.seen[-1]


@functools.cache
def bomb(size: int = 64 * 1024 * 1024) -> bytes:
    """gzip of ``size`` zero bytes (about 64 KiB on the wire for 64 MiB inflated)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1024 * 1024)
    out = [z.compress(block) for _ in range(size // len(block))]
    return b"".join(out) + z.flush()


def head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def json_reply(value: Any, status: str = "200 OK", **extra: str) -> bytes:
    body = json.dumps(value).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **extra}
    return head(status, headers) + body


async def _endless(w: Writer, seen: Seen) -> None:
    w.write(head("200 OK", {"Content-Type": "application/json", "Connection": "close"}))
    chunk = b"[" + b"0," * 32768
    while True:  # until the client hangs up
        w.write(chunk)
        await w.drain()


async def _drip(w: Writer, seen: Seen) -> None:
    w.write(head("200 OK", {"Content-Type": "application/json", "Content-Length": "100000"}))
    while True:
        w.write(b" ")
        await w.drain()
        await asyncio.sleep(0.2)  # the server's pace, not the test's: a slow body on purpose


async def _bomb(w: Writer, seen: Seen) -> None:
    data = bomb()
    w.write(head("200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip",
                            "Content-Length": str(len(data))}))  # fmt: skip
    w.write(data)
    await w.drain()


async def _short_length(w: Writer, seen: Seen) -> None:
    """Declares 2 bytes, then keeps sending."""
    w.write(head("200 OK", {"Content-Type": "application/json", "Content-Length": "2"}))
    w.write(b"{}" + b" " * (2 * 1024 * 1024))
    await w.drain()


async def _long_length(w: Writer, seen: Seen) -> None:
    """Declares 500000 bytes, sends 2 and hangs up."""
    w.write(head("200 OK", {"Content-Type": "application/json", "Content-Length": "500000"}))
    w.write(b"{}")
    await w.drain()


async def _huge_length(w: Writer, seen: Seen) -> None:
    """Declares 1 GiB and would send it."""
    w.write(head("200 OK", {"Content-Type": "application/json", "Content-Length": str(1 << 30)}))
    w.write(b"[" + b"0," * 1000)
    await w.drain()


async def _set_cookie(w: Writer, seen: Seen) -> None:
    w.write(json_reply({"set": True}, **{"Set-Cookie": "session=abc123; Path=/"}))


async def _echo(w: Writer, seen: Seen) -> None:
    w.write(json_reply({"line": seen.request_line, "headers": seen.headers}))


async def _echo_error(w: Writer, seen: Seen) -> None:
    """401 with the request headers in the JSON body, as a JSON string, and as object keys."""
    echo = {"headers": seen.headers, "as_text": json.dumps(seen.headers),
            "by_value": {v: k for k, v in seen.headers.items()}}  # fmt: skip
    w.write(json_reply(echo, "401 Unauthorized"))


async def _token(w: Writer, seen: Seen) -> None:
    """A token endpoint that grants whatever it is asked (to inspect the token request)."""
    w.write(json_reply({"access_token": "from-hostile", "token_type": "Bearer", "expires_in": 3600}))


async def _no_content(w: Writer, seen: Seen) -> None:
    w.write(head("204 No Content", {}))


ROUTES: dict[str, Callable[[Writer, Seen], Awaitable[None]]] = {
    "/endless": _endless,
    "/drip": _drip,
    "/bomb": _bomb,
    "/short-length": _short_length,
    "/long-length": _long_length,
    "/huge-length": _huge_length,
    "/set-cookie": _set_cookie,
    "/no-content": _no_content,
    "/token": _token,
    "/echo-error": _echo_error,
}


async def _read_request(r: asyncio.StreamReader) -> Seen:
    request_line = (await r.readline()).decode("latin-1").rstrip("\r\n")
    headers: dict[str, str] = {}
    while (line := (await r.readline()).decode("latin-1").rstrip("\r\n")) != "":
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await r.readexactly(length) if length else b""
    return Seen(request_line, headers, body)


@contextlib.asynccontextmanager
async def hostile_server() -> AsyncIterator[Hostile]:
    state = Hostile(0)
    writers: set[Writer] = set()

    async def handle(r: asyncio.StreamReader, w: Writer) -> None:
        writers.add(w)
        try:
            while True:
                try:
                    seen = await _read_request(r)
                except (asyncio.IncompleteReadError, ConnectionError, ValueError):
                    return
                if not seen.request_line:
                    return
                state.seen.append(seen)
                path = seen.request_line.split(" ")[1].split("?")[0]
                await ROUTES.get(path, _echo)(w, seen)
                await w.drain()
                if path in ROUTES and path not in ("/set-cookie", "/no-content", "/token", "/echo-error"):
                    return
        except ConnectionError:
            return
        finally:
            w.close()
            writers.discard(w)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        server.close()
        for w in list(writers):
            w.close()  # the handler sees end-of-stream or a lost connection and returns
        await asyncio.wait_for(server.wait_closed(), 5)
