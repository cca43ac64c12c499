"""A policy decision point that implements HELM's Kernel contract exactly, and misbehaves on demand.

``POST /api/v1/evaluate`` demands ``Authorization: Bearer <key>``, ``X-Helm-Tenant-ID`` and
``X-Helm-Principal-ID`` (401 / 400 otherwise) and a JSON body with ``principal``, ``action:
"EXECUTE_TOOL"``, ``resource`` and a ``context`` holding ``tool``, ``args``, ``session_id``,
``risk_class`` (T0 to T3) and ``effect_class`` (E0 to E4) (422 otherwise). It answers
``{"verdict", "decision_id", "receipt_id"}`` with the verdict ``mode`` names — or, for the
failure modes, a body that is not JSON (``garbage``), JSON of the wrong shape (``lowercase``,
``no_ids``, ``list``), an HTTP error (``error500``), a redirect (``redirect``), a connection
closed without an answer (``hangup``), or no answer at all until the test ends (``silent``).
Every request it received is kept (headers and body) for the test to read.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support import LOOPBACK

VERDICT_MODES = ("ALLOW", "DENY", "ESCALATE", "PENDING")
FAILURE_MODES = ("garbage", "lowercase", "no_ids", "list", "error500", "redirect", "hangup", "silent")


@dataclass
class Seen:
    headers: dict[str, str]
    body: Any


@dataclass
class DecisionPointServer:
    key: str
    tenant: str = "tenant-a"
    principal: str = "helm-desktop"
    mode: str = "ALLOW"
    port: int = 0
    seen: list[Seen] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    count: int = 0

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def answer(self, headers: dict[str, str], raw: bytes) -> tuple[int, bytes]:
        if headers.get("authorization") != f"Bearer {self.key}":
            return 401, b'{"error": "unauthorized"}'
        if (
            headers.get("x-helm-tenant-id") != self.tenant
            or headers.get("x-helm-principal-id") != self.principal
        ):
            return 400, b'{"error": "tenant or principal missing"}'
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, b'{"error": "not json"}'
        self.seen.append(Seen(headers, body))
        if not valid_request(body, self.principal):
            return 422, b'{"error": "not an EXECUTE_TOOL evaluation"}'
        self.count += 1
        ids = {"decision_id": f"dec-{self.count}", "receipt_id": f"rcpt-{self.count}"}
        shapes: dict[str, Any] = {
            "lowercase": {"verdict": self.mode.lower(), **ids},
            "no_ids": {"verdict": "ALLOW"},
            "list": ["ALLOW", ids],
        }
        if self.mode in VERDICT_MODES:
            return 200, json.dumps({"verdict": self.mode, **ids, "reason_code": "TEST"}).encode()
        if self.mode == "garbage":
            return 200, b"<html>ALLOW</html>"
        return 200, json.dumps(shapes.get(self.mode, {"verdict": "ALLOW", **ids})).encode()


def valid_request(body: Any, principal: str) -> bool:
    if (
        not isinstance(body, dict)
        or body.get("action") != "EXECUTE_TOOL"
        or body.get("principal") != principal
    ):
        return False
    context = body.get("context")
    if not isinstance(body.get("resource"), str) or not isinstance(context, dict):
        return False
    return (
        isinstance(context.get("tool"), str)
        and isinstance(context.get("args"), dict)
        and isinstance(context.get("session_id"), str)
        and re.fullmatch(r"T[0-3]", str(context.get("risk_class"))) is not None
        and re.fullmatch(r"E[0-4]", str(context.get("effect_class"))) is not None
    )


def _handler(server: DecisionPointServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            if self.path != "/api/v1/evaluate":
                self._send(404, b"{}")
                return
            if server.mode == "hangup":
                self.close_connection = True
                return
            if server.mode == "silent":
                server.released.wait(60)
                self.close_connection = True
                return
            if server.mode == "redirect":
                self.send_response(307)
                self.send_header("Location", f"{server.url}/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if server.mode == "error500":
                self._send(500, b'{"verdict": "ALLOW"}')
                return
            status, body = server.answer({k.lower(): v for k, v in self.headers.items()}, raw)
            self._send(status, body)

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def decision_point_server(key: str) -> Iterator[DecisionPointServer]:
    """The server on a free port of 127.0.0.1, stopped (its silent answers released) at the end."""
    state = DecisionPointServer(key)
    httpd = ThreadingHTTPServer((LOOPBACK, 0), _handler(state))
    httpd.daemon_threads = False  # server_close joins every handler thread
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, name="decision-point", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.released.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)
