"""A small content server on 127.0.0.1 that records every request it gets (method, path,
headers): what an app's resource domain looks like to Helm's loader."""

from __future__ import annotations

import base64
import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

STYLE = b"#styled { width: 7px; } @font-face { font-family: face; src: url(../fonts/face.woff2); }"


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]


class Cdn:
    """``/pixel.png`` (sets a cookie), ``/lib.js``, ``/css/style.css`` (its font
    ``/fonts/face.woff2`` by a relative URL), ``/page.html`` (HTML), ``/big.png``
    (``big`` bytes), ``/hop.png`` (a redirect to ``hop_to``), anything else 404."""

    def __init__(self, big: int = 0) -> None:
        self.big = big
        self.hop_to = ""
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        cdn = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                cdn._record(self)
                path = self.path.split("?", 1)[0]
                if path == "/pixel.png":
                    self._send(200, "image/png", PIXEL, ("Set-Cookie", "session=s1; Path=/"))
                elif path == "/lib.js":
                    self._send(200, "text/javascript", b"window.cdnLoaded = (window.cdnLoaded || 0) + 1;")
                elif path == "/css/style.css":  # its font by a relative URL
                    self._send(200, "text/css", STYLE)
                elif path == "/fonts/face.woff2":
                    self._send(200, "font/woff2", b"wOF2 not really a font")
                elif path == "/page.html":
                    self._send(200, "text/html", b"<p>not a subresource</p>")
                elif path == "/big.png":
                    self._send(200, "image/png", PIXEL + b"\0" * (cdn.big - len(PIXEL)))
                elif path == "/hop.png":
                    self._send(302, "text/plain", b"", ("Location", cdn.hop_to))
                else:
                    self._send(404, "text/plain", b"not here")

            def do_POST(self) -> None:
                cdn._record(self)
                self._send(200, "image/png", PIXEL)

            def _send(self, status: int, media: str, body: bytes, *extra: tuple[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # Helm stopped reading
                    self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"

    def _record(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.seen.append(
                Seen(handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()})
            )

    def paths(self) -> list[str]:
        with self._lock:
            return [s.path for s in self.seen]


@contextmanager
def cdn(big: int = 0) -> Iterator[Cdn]:
    server = Cdn(big)
    thread = threading.Thread(target=server.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
        thread.join(5)
