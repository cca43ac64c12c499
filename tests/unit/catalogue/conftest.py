"""A publisher with a signing key made for the test, its catalogue folder, and a real HTTP
server on 127.0.0.1 serving that folder (index, signature and archives) as a publisher would."""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from broker import signatures
from broker.catalogue import archive, publish
from broker.catalogue.store import CatalogueEntry
from tests.helpers import write_extension
from tests.unit.policy.policy_setup import policy as policy  # the fixture, for the policy tests here

EXT = "com.example.board"
FILES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["notes/*.md"],
    "operations": ["list", "read"],
}


def board(version: str, **changes: Any) -> dict[str, Any]:
    """The board extension at ``version``; ``connections``/``permissions`` override."""
    raw: dict[str, Any] = {
        "id": EXT,
        "name": "Board",
        "version": version,
        "kind": "widget",
        "entry": "index.html",
        "connections": [copy.deepcopy(FILES)],
    }
    raw.update(changes)
    return raw


@dataclass
class Publisher:
    """A catalogue folder and the key that signs it."""

    folder: Path
    work: Path
    key: Ed25519PrivateKey = field(default_factory=Ed25519PrivateKey.generate)

    @property
    def public_pem(self) -> str:
        return signatures.public_pem(self.key.public_key()).decode("ascii")

    def pack(self, manifest: Mapping[str, Any], html: str = "<!doctype html><p>board</p>") -> Path:
        source = write_extension(self.work / f"{manifest['id']}-{manifest['version']}", manifest, html)
        made, data = archive.pack(source)
        out = self.work / archive.archive_name(made)
        out.write_bytes(data)
        return out

    def release(self, manifest: Mapping[str, Any], *, sign: bool = True) -> Path:
        packed = self.pack(manifest)
        publish.add_release(self.folder, packed)
        if sign:
            self.sign()
        return self.folder / packed.name

    def sign(self) -> int:
        return publish.sign(self.folder, self.key)

    def entry(self, url: str, name: str = "acme") -> CatalogueEntry:
        return CatalogueEntry(name, url, self.public_pem)


@pytest.fixture
def publisher(tmp_path: Path) -> Publisher:
    folder, work = tmp_path / "catalogue", tmp_path / "work"
    folder.mkdir()
    work.mkdir()
    return Publisher(folder, work)


@dataclass
class Served:
    url: str
    requests: list[str]


@pytest.fixture
def served(publisher: Publisher) -> Iterator[Served]:
    """The publisher's folder on a real HTTP server on 127.0.0.1."""
    requests: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            requests.append(self.path)

    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(publisher.folder))
    )
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}/", requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
