"""Reading a catalogue: its index and signature, then archives, from https, loopback http or a folder.

The index is verified before it is parsed: its Ed25519 signature (``broker.signatures``) by the
key the user added the catalogue with, then its serial against the highest this Helm has seen
for that catalogue (an older index, or the same serial with other bytes, is a rollback and is
refused). An archive is hashed as it arrives and kept only when its size and sha256 are exactly
what the verified index pins; nothing is unpacked before that. Redirects are not followed, so
an https catalogue never hands Helm to plain http.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from broker import signatures
from broker.catalogue.errors import ArchiveRefused, CatalogueSetupError, IndexRefused
from broker.catalogue.index import MAX_INDEX, Index, Release, parse_index
from broker.catalogue.store import CatalogueEntry, CatalogueStore
from broker.urls import url_problem

INDEX_FILE = "index.json"
SIGNATURE_FILE = "index.sig"
MAX_SIGNATURE = 4096
MAX_ARCHIVE = 64 * 1024 * 1024
TIMEOUT = httpx.Timeout(30.0, connect=10.0)


def check_location(url: str) -> str:
    """An index location as it is stored: an https URL (http on loopback), or an absolute folder.
    A URL names the folder that holds ``index.json`` and ``index.sig``."""
    if "://" in url:
        problem = url_problem(url, allow_query=False)
        if problem is not None:
            raise CatalogueSetupError(f"the catalogue URL {problem}")
        return url if url.endswith("/") else url + "/"
    folder = Path(url).expanduser()
    if not folder.is_absolute():
        raise CatalogueSetupError("a catalogue folder must be an absolute path (or give an https:// URL)")
    if not folder.is_dir():
        raise CatalogueSetupError(f"the catalogue folder {folder} does not exist")
    return str(folder)


def check_key(pem: str) -> str:
    try:
        signatures.public_key(pem.encode("ascii"))
    except (signatures.BadSignature, UnicodeEncodeError):
        raise CatalogueSetupError(
            "the catalogue key must be a PEM Ed25519 public key (helm catalogue keygen makes one)"
        ) from None
    return pem


@dataclass
class CatalogueReader:
    """Reads one catalogue for one operation (an install, an update check)."""

    entry: CatalogueEntry
    client: httpx.AsyncClient | None = None

    async def index(self, store: CatalogueStore) -> Index:
        """The verified index; records its serial as seen. ``IndexRefused`` otherwise."""
        name = self.entry.name
        data = await self._read(INDEX_FILE, MAX_INDEX, "its index")
        signature = await self._read(SIGNATURE_FILE, MAX_SIGNATURE, "its index's signature")
        try:
            signatures.verify(data, signature, signatures.public_key(self.entry.key.encode("ascii")))
        except signatures.BadSignature as bad:
            raise IndexRefused(
                f"catalogue {name}: its index is refused — {bad.problem.value}. Nothing from it was "
                "installed; ask its publisher, or check the key you added it with"
            ) from None
        index = parse_index(data, hashlib.sha256(data).hexdigest(), name)
        _record_serial(store, name, index)
        return index

    async def archive(self, release: Release, dest: Path) -> None:
        """Write ``release``'s archive to ``dest`` once its size and sha256 match the index."""
        limit = min(release.size, MAX_ARCHIVE)
        if release.size > MAX_ARCHIVE:
            raise ArchiveRefused(f"{release.label}: the archive is larger than {MAX_ARCHIVE // 2**20} MiB")
        data = await self._read(
            release.archive, limit, f"the archive of {release.label}", refuse=ArchiveRefused
        )
        if len(data) != release.size or hashlib.sha256(data).hexdigest() != release.sha256:
            raise ArchiveRefused(
                f"{release.label}: the archive from catalogue {self.entry.name} is not the one its signed "
                "index pins (its sha256 or size differs); it was discarded unopened"
            )
        await asyncio.to_thread(dest.write_bytes, data)

    async def _read(
        self, name: str, limit: int, what: str, refuse: type[IndexRefused | ArchiveRefused] = IndexRefused
    ) -> bytes:
        base = self.entry.url
        if "://" not in base:
            return _read_file(Path(base) / name, limit, f"catalogue {self.entry.name}: {what}", refuse)
        return await self._get(urljoin(base, name), limit, f"catalogue {self.entry.name}: {what}", refuse)

    async def _get(
        self, url: str, limit: int, what: str, refuse: type[IndexRefused | ArchiveRefused]
    ) -> bytes:
        host = urlsplit(url).hostname
        client = self.client or httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False)
        try:
            async with client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise refuse(f"{what}: {host} answered HTTP {response.status_code}")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise refuse(f"{what}: larger than expected ({limit} bytes at most); refused")
                return bytes(body)
        except httpx.HTTPError as exc:
            raise refuse(f"{what}: cannot be read from {host} ({type(exc).__name__})") from None
        finally:
            if self.client is None:
                await client.aclose()


def _read_file(path: Path, limit: int, what: str, refuse: type[IndexRefused | ArchiveRefused]) -> bytes:
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise refuse(f"{what}: cannot read {path.name} ({exc.strerror})") from None
    if len(data) > limit:
        raise refuse(f"{what}: larger than expected ({limit} bytes at most); refused")
    return data


def _record_serial(store: CatalogueStore, name: str, index: Index) -> None:
    """Refuse an index older than the newest seen (or the same serial with other bytes); else
    remember it, so the next reading cannot go back."""
    with store.update() as state:
        seen = state.seen.get(name)
        if seen is not None:
            if index.serial < seen["serial"]:
                raise IndexRefused(
                    f"catalogue {name}: its index has serial {index.serial}, older than serial "
                    f"{seen['serial']} this Helm has already seen — a rollback, refused. Nothing was "
                    "installed or updated"
                )
            if index.serial == seen["serial"] and index.digest != seen["digest"]:
                raise IndexRefused(
                    f"catalogue {name}: its index has serial {index.serial} like the one seen before, but "
                    "other contents — refused (a publisher signs every change with a new serial)"
                )
        state.seen[name] = {"serial": index.serial, "digest": index.digest}
