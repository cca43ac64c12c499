"""The publisher's side: a signing key, releases added to an index, the index signed.

A publisher keeps a folder that is the catalogue as it will be served: ``index.json``,
``index.sig`` and the archives (``helm ext pack`` makes them). ``add_release`` copies an archive
in and records its sha256, size, manifest digest and capability summary; ``set_status``
deprecates or withdraws a version, with a reason users are shown; ``sign`` raises the serial by
one, writes the index and signs its exact bytes. Until ``sign`` runs, the old signature no longer
matches, so a half-edited catalogue is never accepted by Helm.

The private key stays the publisher's: ``keygen`` writes it owner-only (0600, never over an
existing file) and ``read_private_key`` refuses a key file other users can read. Its bytes never
appear in a message.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from broker import signatures
from broker.catalogue import capabilities
from broker.catalogue.archive import extract
from broker.catalogue.errors import ArchiveRefused, CatalogueSetupError
from broker.catalogue.index import Index, Release, Status, parse_index
from broker.catalogue.source import INDEX_FILE, SIGNATURE_FILE
from broker.errors import ManifestError
from broker.manifest import load as load_manifest


def keygen(private_out: Path, public_out: Path) -> str:
    """A new signing key: the private half owner-only, the public half as PEM; its key id."""
    key = Ed25519PrivateKey.generate()
    try:
        fd = os.open(private_out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise CatalogueSetupError(f"{private_out} exists: Helm never writes a key over another") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(signatures.private_pem(key))
    public_out.write_bytes(signatures.public_pem(key.public_key()))
    return signatures.key_id(key.public_key())


def read_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        info = path.stat()
        pem = path.read_bytes()
    except OSError as exc:
        raise CatalogueSetupError(f"cannot read the signing key {path} ({exc.strerror})") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise CatalogueSetupError(f"the signing key {path} is readable by other users: chmod 600 it first")
    try:
        return signatures.private_key(pem)
    except signatures.BadSignature as bad:
        raise CatalogueSetupError(f"the signing key {path} is {bad.detail}") from None


def read_draft(folder: Path) -> Index:
    """The index being edited (an empty one for a new catalogue)."""
    path = folder / INDEX_FILE
    if not path.exists():
        return Index(0, {})
    data = path.read_bytes()
    return parse_index(data, hashlib.sha256(data).hexdigest(), str(folder))


def _write_draft(folder: Path, index: Index) -> None:
    (folder / INDEX_FILE).write_text(
        json.dumps(index.to_json(), indent=2, ensure_ascii=False) + "\n", "utf-8"
    )


def add_release(folder: Path, archive_file: Path) -> Release:
    """Add the archive (copied beside the index) as an active release; return it."""
    data = archive_file.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        unpacked = Path(tmp) / "x"
        try:
            extract(archive_file, unpacked, archive_file.name)
            manifest = load_manifest(unpacked)
        except ManifestError as exc:
            raise ArchiveRefused(
                f"{archive_file.name}: its manifest has {len(exc.issues)} problem(s)"
            ) from None
        release = Release(
            manifest.id, manifest.version, f"{manifest.id}-{manifest.version}.tar.gz", len(data),
            hashlib.sha256(data).hexdigest(), manifest.digest(), capabilities.summary(manifest),
        )  # fmt: skip
    index = read_draft(folder)
    if index.release(release.extension, release.version) is not None:
        raise CatalogueSetupError(f"{release.label} is already in the index: publish a new version instead")
    target = folder / release.archive
    if target.resolve() != archive_file.resolve():
        shutil.copyfile(archive_file, target)
    releases = {ext: dict(versions) for ext, versions in index.releases.items()}
    releases.setdefault(release.extension, {})[release.version] = release
    _write_draft(folder, Index(index.serial, releases))
    return release


def set_status(folder: Path, extension: str, version: str, status: Status, reason: str) -> Release:
    index = read_draft(folder)
    found = index.release(extension, version)
    if found is None:
        raise CatalogueSetupError(f"{extension}@{version} is not in the index")
    if status is Status.WITHDRAWN and not reason.strip():
        raise CatalogueSetupError("say why it is withdrawn (--reason): users are shown it")
    changed = Release(**{**vars(found), "status": status, "reason": reason})
    releases = {ext: dict(versions) for ext, versions in index.releases.items()}
    releases[extension][version] = changed
    _write_draft(folder, Index(index.serial, releases))
    return changed


def sign(folder: Path, key: Ed25519PrivateKey) -> int:
    """Raise the serial, write the index and its signature; return the new serial."""
    index = read_draft(folder)
    signed = Index(index.serial + 1, index.releases)
    data = (json.dumps(signed.to_json(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    (folder / INDEX_FILE).write_bytes(data)
    (folder / SIGNATURE_FILE).write_bytes(signatures.sign(data, key))
    return signed.serial
