"""A server at a URL that redirects Helm elsewhere: Helm's bearer token never leaves the
endpoint's origin (the SDK follows a redirect only within it)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.helpers import new_broker
from tests.support import LOOPBACK
from tests.unit.kinds.mcp_setup import TOKEN, add_http, code, mcp_extension


class Recorder(ThreadingHTTPServer):
    """An HTTP server that records the Authorization header of every request it gets and
    answers each with ``status``, redirecting to ``location`` when it is set."""

    def __init__(self, status: int, location: str = "") -> None:
        self.status, self.location = status, location
        self.seen: list[str | None] = []
        super().__init__((LOOPBACK, 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.server_address[1]}/mcp"


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.seen.append(self.headers.get("authorization"))
        self.send_response(self.server.status)
        if self.server.location:
            self.send_header("location", self.server.location)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_DELETE = do_POST

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(server: Recorder) -> Iterator[Recorder]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()


async def test_a_redirect_to_another_origin_is_not_followed_and_the_token_stays_home(tmp_path: Path):
    with serving(Recorder(500)) as elsewhere, serving(Recorder(307, elsewhere.url)) as endpoint:
        async with new_broker(tmp_path / "home") as broker:
            add_http(broker, "moved", endpoint.url)
            ctx = await mcp_extension(broker, tmp_path, "moved", ["anything"])
            result = await broker.call(ctx, "m", "anything", {})
    assert code(result) == "unavailable"
    assert endpoint.seen and set(endpoint.seen) == {f"Bearer {TOKEN}"}
    assert elsewhere.seen == []
