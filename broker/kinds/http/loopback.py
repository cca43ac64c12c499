"""The OAuth2 redirect target: a one-shot HTTP listener on 127.0.0.1 (pure asyncio).

It binds an OS-assigned port on 127.0.0.1 only and answers ``GET /oauth/callback``. A request
must carry exactly one ``Host: 127.0.0.1:<port>`` or ``Host: localhost:<port>``: a web page that
rebinds its own name to 127.0.0.1 reaches the port, but the browser still sends that page's
name, so such a request is answered 400 and ignored. So is one whose ``state`` does not match
(a stray or forged request cannot end the user's sign-in, neither with a code nor with an
error); the first request with the right host and state is the answer, after which the
listener closes. Anything else gets 404. Each request must arrive within a few seconds and
within 8 KiB, so a client that connects and says nothing cannot hold it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

CALLBACK_PATH = "/oauth/callback"
MAX_HEAD = 8 * 1024
READ_SECONDS = 5.0

_DONE = """<!doctype html><meta charset="utf-8"><title>Helm</title>
<p>{message}</p><p>You can close this tab and return to Helm.</p>"""


@dataclass(frozen=True)
class Callback:
    """What the authorization server sent back: a code, or an error code."""

    code: str | None
    error: str | None


class CallbackListener:
    """Waits for one redirect carrying ``state``; use ``await CallbackListener.open(state)``."""

    def __init__(self, state: str) -> None:
        self._state = state
        self._result: asyncio.Future[Callback] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None
        self.port = 0

    @classmethod
    async def open(cls, state: str) -> CallbackListener:
        listener = cls(state)
        listener._server = await asyncio.start_server(listener._handle, "127.0.0.1", 0)
        listener.port = int(listener._server.sockets[0].getsockname()[1])
        return listener

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def wait(self, seconds: float) -> Callback:
        """The callback, or TimeoutError after ``seconds``; the listener is closed either way."""
        try:
            async with asyncio.timeout(seconds):
                return await asyncio.shield(self._result)
        finally:
            await self.close()

    async def close(self) -> None:
        if not self._result.done():
            self._result.cancel()
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(READ_SECONDS):
                head = await reader.readuntil(b"\r\n\r\n")
            status, message = self._answer(head)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            status, message = 400, "Helm could not read this request."
        body = _DONE.format(message=message).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
        head_out = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
            "Connection: close\r\n\r\n"
        )
        with contextlib.suppress(ConnectionError):
            writer.write(head_out.encode() + body)
            await writer.drain()
        writer.close()
        if self._result.done() and self._server is not None:
            self._server.close()  # single use: no further connections

    def _addressed_to_us(self, fields: list[str]) -> bool:
        """Exactly one Host field, naming this listener by loopback address or localhost."""
        hosts = [value for name, sep, value in (f.partition(":") for f in fields)
                 if sep and name.lower() == "host"]  # fmt: skip
        allowed = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        return len(hosts) == 1 and hosts[0].strip(" \t").lower() in allowed

    def _answer(self, head: bytes) -> tuple[int, str]:
        if len(head) > MAX_HEAD:
            return 400, "Helm could not read this request."
        request_line, *fields = head.decode("latin-1").split("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return 404, "Not found."
        if not self._addressed_to_us(fields):
            return 400, "Helm answers only requests addressed to 127.0.0.1 or localhost."
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            return 404, "Not found."
        query = parse_qs(target.query, keep_blank_values=True)
        state = query.get("state", [""])[0]
        if self._result.done() or not hmac.compare_digest(state.encode(), self._state.encode()):
            return 400, "This sign-in answer does not belong to the sign-in Helm started."
        code, error = query.get("code", [None])[0], query.get("error", [None])[0]
        self._result.set_result(Callback(code or None, error or (None if code else "no_code")))
        if code and not error:
            return 200, "Helm received the sign-in."
        return 200, "The sign-in did not complete."
