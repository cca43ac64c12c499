"""A small npm registry on 127.0.0.1 serving real npm tarballs built in the test.

It answers the two requests npm clients make — the packument ``/<name>`` and the tarball
``/<name>/-/<base>-<version>.tgz`` — and can misbehave on purpose per tarball: serve other bytes,
stop half-way through a declared length, or hang until released.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote


def npm_tarball(name: str, version: str, files: dict[str, str | bytes], **manifest: Any) -> bytes:
    """A gzip tarball laid out as ``npm pack`` makes it: everything under ``package/``."""
    pkg = {"name": name, "version": version, **manifest}
    entries: dict[str, str | bytes] = {"package.json": json.dumps(pkg, indent=2), **files}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path, content in entries.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"package/{path}")
            info.size = len(data)
            info.mode = 0o755 if path.startswith("bin/") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


@dataclass
class Package:
    name: str
    version: str
    data: bytes
    manifest: dict[str, Any]
    serve: bytes | None = None  # other bytes to send instead (a tampering registry)
    mode: str = "ok"  # ok | truncate | hang


@dataclass
class LocalRegistry:
    packages: dict[tuple[str, str], Package] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    hanging: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""
    _server: ThreadingHTTPServer | None = None

    def publish(self, name: str, version: str, files: dict[str, str | bytes], **manifest: Any) -> Package:
        package = Package(name, version, npm_tarball(name, version, files, **manifest), manifest)
        self.packages[(name, version)] = package
        return package

    def tarball_requests(self) -> list[str]:
        return [r for r in self.requests if r.endswith(".tgz")]

    def start(self) -> None:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                registry.requests.append(self.path)
                registry.answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = unquote(handler.path.lstrip("/"))
        if "/-/" in path:
            name, _, file = path.partition("/-/")
            for (n, v), package in self.packages.items():
                if n == name and file == f"{n.rpartition('/')[2]}-{v}.tgz":
                    return self._send_tarball(handler, package)
        elif any(n == path for n, _ in self.packages):
            return self._send(handler, 200, json.dumps(self.packument(path)).encode(), "application/json")
        self._send(handler, 404, b'{"error":"not found"}', "application/json")

    def packument(self, name: str) -> dict[str, Any]:
        versions = {}
        for (n, v), package in self.packages.items():
            if n == name:
                dist = {
                    "tarball": f"{self.url}{n}/-/{n.rpartition('/')[2]}-{v}.tgz",
                    "integrity": sri(package.data),
                }
                versions[v] = {"name": n, "version": v, **package.manifest, "dist": dist}
        latest = sorted(versions, key=lambda v: [int(x) for x in v.split(".")])[-1]
        return {"name": name, "dist-tags": {"latest": latest}, "versions": versions}

    def _send_tarball(self, handler: BaseHTTPRequestHandler, package: Package) -> None:
        body = package.serve if package.serve is not None else package.data
        if package.mode == "hang":
            self.hanging.set()
            self.release.wait(30)
            return
        if package.mode == "truncate":
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body[: len(body) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        self._send(handler, 200, body, "application/octet-stream")

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
