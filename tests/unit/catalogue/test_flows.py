"""Installing from a signed catalogue, updating with re-consent and stepping back, against a
real HTTP server on 127.0.0.1 and a folder; and every refusal: a tampered archive, a bad
signature, a withdrawn version, a rolled-back index."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import ssl
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from broker import extensions, signatures
from broker.broker import Broker
from broker.catalogue import ArchiveRefused, IndexRefused, ReleaseRefused, Status, publish, updates
from broker.catalogue.store import CatalogueEntry, CatalogueStore
from broker.context import CallContext
from broker.workspaces import add_workspace
from tests.helpers import new_broker
from tests.servers.tls import certificate
from tests.unit.catalogue.conftest import EXT, FILES, Publisher, Served, board


@pytest.fixture
async def broker(tmp_path: Path) -> Broker:
    home = tmp_path / "home"
    b = new_broker(home)
    (tmp_path / "root" / "notes").mkdir(parents=True)
    (tmp_path / "root" / "notes" / "a.md").write_text("# a\n")
    add_workspace(b.home, "ws", tmp_path / "root")
    return b


def add(broker: Broker, entry: CatalogueEntry) -> None:
    with CatalogueStore(broker.home.path).update() as state:
        state.catalogues[entry.name] = entry


async def install(broker: Broker, entry: CatalogueEntry, version: str | None = None) -> updates.Fetched:
    fetched = await updates.fetch(broker.home.path, entry, EXT, version)
    extensions.install(broker.home, "ws", fetched.manifest.folder)
    updates.record_install(broker.home.path, "ws", fetched)
    await extensions.approve(broker, await extensions.review(broker, "ws", EXT))
    return fetched


async def list_notes(broker: Broker) -> dict[str, Any]:
    return await broker.call(CallContext("ws", EXT, "i1"), "notes", "list", {})


async def test_an_extension_installs_from_a_catalogue_served_over_http(
    broker: Broker, publisher: Publisher, served: Served
) -> None:
    publisher.release(board("1.0.0"))
    entry = publisher.entry(served.url)
    async with broker:
        fetched = await install(broker, entry)
        assert fetched.manifest.version == "1.0.0"
        assert fetched.manifest.folder.is_relative_to(broker.home.path / "catalogue" / "extensions")
        assert (await list_notes(broker))["ok"] is True
    assert "/index.json" in served.requests and "/index.sig" in served.requests
    assert CatalogueStore(broker.home.path).read().seen["acme"]["serial"] == 1


async def test_an_update_waits_for_approval_shows_what_it_adds_and_steps_back(
    broker: Broker, publisher: Publisher, served: Served
) -> None:
    publisher.release(board("1.0.0"))
    entry = publisher.entry(served.url)
    add(broker, entry)
    grown = dict(FILES, paths=["notes/*.md", "notes/**/*.txt"], operations=["list", "read", "write"])
    http = {
        "id": "gh",
        "kind": "http",
        "service": "github",
        "calls": {"issues": {"method": "GET", "path": "/issues"}},
    }
    async with broker:
        first = await install(broker, entry)
        publisher.release(board("1.1.0", connections=[grown, http], permissions={"write": True}))
        found = await updates.check(broker, "ws")
        [update] = found.updates
        words = update.diff.lines()
        assert update.diff.grows
        assert "may now write (every write still asks you to confirm)" in words
        assert "[notes] new glob notes/**/*.txt" in words
        assert "[notes] new operation write" in words
        assert "new connection [gh]: http — service github" in words
        assert "[gh] new read issues: GET /issues" in words
        # the approved version keeps running until the user approves the update
        assert broker.home.settings().workspace("ws").extensions[EXT].path == first.manifest.folder
        assert (await list_notes(broker))["ok"] is True
        reviewed = await updates.review_update(broker, update)
        assert reviewed.review.version == "1.1.0" and reviewed.approved_before
        await updates.approve_update(broker, update, reviewed)
        now = broker.home.settings().workspace("ws").extensions[EXT]
        assert now.path == update.fetched.manifest.folder
        assert broker.standing("ws", EXT).allows_calls
        assert await updates.rollback(broker, "ws", EXT) == "1.0.0"
        back = broker.home.settings().workspace("ws").extensions[EXT]
        assert back.path == first.manifest.folder and broker.standing("ws", EXT).allows_calls
        with pytest.raises(Exception, match="no earlier version"):
            await updates.rollback(broker, "ws", EXT)


async def test_an_update_that_adds_nothing_says_no_new_capabilities(
    broker: Broker, publisher: Publisher, served: Served
) -> None:
    publisher.release(board("1.0.0"))
    entry = publisher.entry(served.url)
    add(broker, entry)
    async with broker:
        await install(broker, entry)
        publisher.release(board("1.0.1", connections=[dict(FILES, operations=["list"])]))
        [update] = (await updates.check(broker, "ws")).updates
        assert not update.diff.grows
        assert update.diff.lines() == ("no new capabilities", "[notes] operation read removed")


async def test_a_tampered_archive_is_refused_before_it_is_unpacked(
    broker: Broker, publisher: Publisher, served: Served
) -> None:
    archive = publisher.release(board("1.0.0"))
    archive.write_bytes(archive.read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(ArchiveRefused, match="not the one its signed index pins"):
        await updates.fetch(broker.home.path, publisher.entry(served.url), EXT)
    assert not (broker.home.path / "catalogue" / "extensions" / EXT).exists()


async def test_an_index_signed_by_another_key_or_changed_after_signing_is_refused(
    broker: Broker, publisher: Publisher, served: Served
) -> None:
    publisher.release(board("1.0.0"))
    stranger = CatalogueEntry(
        "acme", served.url, signatures.public_pem(Ed25519PrivateKey.generate().public_key()).decode()
    )
    with pytest.raises(IndexRefused, match="another key"):
        await updates.fetch(broker.home.path, stranger, EXT)
    index = publisher.folder / "index.json"
    index.write_text(index.read_text().replace('"status": "active"', '"status": "deprecated"'))
    with pytest.raises(IndexRefused, match="does not verify"):
        await updates.fetch(broker.home.path, publisher.entry(served.url), EXT)
    assert not any(r.endswith(".tar.gz") for r in served.requests)


async def test_a_withdrawn_version_is_not_installed_and_a_running_one_is_stopped_with_the_reason(
    broker: Broker, publisher: Publisher, served: Served
) -> None:
    publisher.release(board("1.0.0"))
    entry = publisher.entry(served.url)
    add(broker, entry)
    async with broker:
        await install(broker, entry)
        publish.set_status(publisher.folder, EXT, "1.0.0", Status.WITHDRAWN, "it leaks notes")
        publisher.sign()
        with pytest.raises(
            ReleaseRefused, match=re.escape("withdrew com.example.board@1.0.0: it leaks notes")
        ):
            await updates.fetch(broker.home.path, entry, EXT, "1.0.0")
        found = await updates.check(broker, "ws")
        assert [w.reason for w in found.withdrawn] == ["it leaks notes"]
        refused = await list_notes(broker)
        assert refused["ok"] is False
        assert (
            "catalogue acme withdrew com.example.board 1.0.0: it leaks notes" in refused["error"]["message"]
        )
        # a fixed version lifts the stop once the user approves it
        publisher.release(board("1.0.1"))
        [update] = (await updates.check(broker, "ws")).updates
        await updates.approve_update(broker, update, await updates.review_update(broker, update))
        assert (await list_notes(broker))["ok"] is True


async def test_an_older_index_is_refused_as_a_rollback(
    broker: Broker, publisher: Publisher, served: Served
) -> None:
    publisher.release(board("1.0.0"))
    old_index, old_sig = (
        (publisher.folder / "index.json").read_bytes(),
        (publisher.folder / "index.sig").read_bytes(),
    )
    publish.set_status(publisher.folder, EXT, "1.0.0", Status.WITHDRAWN, "broken")
    publisher.sign()
    entry = publisher.entry(served.url)
    with pytest.raises(ReleaseRefused, match="withdrew"):
        await updates.fetch(broker.home.path, entry, EXT)
    (publisher.folder / "index.json").write_bytes(old_index)  # a mirror serving yesterday's index
    (publisher.folder / "index.sig").write_bytes(old_sig)
    with pytest.raises(IndexRefused, match=r"serial 1, older than serial 2 .* a rollback"):
        await updates.fetch(broker.home.path, entry, EXT)


async def test_the_same_serial_with_other_contents_is_refused(broker: Broker, publisher: Publisher) -> None:
    publisher.release(board("1.0.0"))
    entry = publisher.entry(str(publisher.folder))
    await updates.fetch(broker.home.path, entry, EXT)
    index = json.loads((publisher.folder / "index.json").read_text())
    index["extensions"][EXT]["versions"]["1.0.0"]["status"] = "deprecated"
    data = (json.dumps(index) + "\n").encode()
    (publisher.folder / "index.json").write_bytes(data)
    (publisher.folder / "index.sig").write_bytes(signatures.sign(data, publisher.key))
    with pytest.raises(IndexRefused, match="serial 1 like the one seen before, but other contents"):
        await updates.fetch(broker.home.path, entry, EXT)


async def test_a_catalogue_folder_installs_like_a_served_one(broker: Broker, publisher: Publisher) -> None:
    publisher.release(board("1.0.0"))
    publisher.release(board("1.2.0"))
    async with broker:
        fetched = await install(broker, publisher.entry(str(publisher.folder)))
        assert fetched.release.version == "1.2.0"
        assert (await list_notes(broker))["ok"] is True


async def test_an_archive_whose_manifest_is_not_the_pinned_one_is_refused(
    broker: Broker, publisher: Publisher
) -> None:
    publisher.release(board("1.0.0"), sign=False)
    other = publisher.pack(board("1.0.0", name="Board (other)"))
    published = publisher.folder / other.name
    published.write_bytes(other.read_bytes())
    index = json.loads((publisher.folder / "index.json").read_text())
    entry_ = index["extensions"][EXT]["versions"]["1.0.0"]

    entry_["sha256"], entry_["size"] = hashlib.sha256(other.read_bytes()).hexdigest(), len(other.read_bytes())
    (publisher.folder / "index.json").write_text(json.dumps(index))
    publisher.sign()
    with pytest.raises(ArchiveRefused, match="manifest is not the one the signed index pins"):
        await updates.fetch(broker.home.path, publisher.entry(str(publisher.folder)), EXT)


async def test_a_deprecated_version_installs_with_the_publisher_s_note(
    broker: Broker, publisher: Publisher
) -> None:
    publisher.release(board("1.0.0"), sign=False)
    publish.set_status(publisher.folder, EXT, "1.0.0", Status.DEPRECATED, "use com.example.board2")
    publisher.sign()
    entry = publisher.entry(str(publisher.folder))
    add(broker, entry)
    async with broker:
        fetched = await install(broker, entry)
        assert fetched.notice == "catalogue acme deprecates com.example.board@1.0.0: use com.example.board2"
        found = await updates.check(broker, "ws")
        assert found.notices == (fetched.notice,) and found.updates == () and found.withdrawn == ()
        assert (await list_notes(broker))["ok"] is True


async def test_an_https_catalogue_installs_only_when_its_certificate_is_trusted(
    broker: Broker, publisher: Publisher, tmp_path: Path
) -> None:
    publisher.release(board("1.0.0"))
    cert, key = certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(publisher.folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        entry = publisher.entry(f"https://127.0.0.1:{server.server_address[1]}/")
        with pytest.raises(IndexRefused, match=r"cannot be read from 127\.0\.0\.1"):
            await updates.fetch(broker.home.path, entry, EXT)  # a certificate no one trusts
        trusted = ssl.create_default_context(cafile=str(cert))
        async with httpx.AsyncClient(verify=trusted, follow_redirects=False) as client:
            fetched = await updates.fetch(broker.home.path, entry, EXT, client=client)
        assert fetched.manifest.version == "1.0.0"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
