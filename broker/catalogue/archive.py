"""Extension archives: ``helm ext pack`` makes them reproducibly; installing unpacks a verified one.

An archive is a gzip tar whose every entry lies under ``package/`` (as npm's do, so the one safe
extractor Helm has, ``broker.tarball``, unpacks both). The same folder always
packs to the same bytes: entries sorted by path, mtime 0, owner 0:0 with no names, modes 0644 or
0755, folders 0755, gzip without a time or file name. Hidden files and folders (``.git``…) and
``__pycache__`` are left out; a symbolic link is refused, since what it points to is not the
author's to ship.

Unpacking runs only on an archive whose sha256 the signed index pinned, into a staging folder
that becomes ``<home>/catalogue/extensions/<id>/<version>-<sha256 prefix>/`` only once its
manifest is valid and is exactly the one the index pins (id, version, digest). An unpacking
holds ``<home>/catalogue/extensions/.lock`` shared; the next start's tidy (``broker.home_tidy``)
removes the staging folders of killed unpackings only once it holds that lock exclusively, so an
unpacking that is running in another Helm process is never disturbed.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import io
import os
import secrets
import shutil
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from broker import tarball
from broker.catalogue.errors import ArchiveRefused
from broker.catalogue.index import Release
from broker.errors import ManifestError
from broker.manifest import Manifest
from broker.manifest import load as load_manifest

TOP = "package"
FOLDER = Path("catalogue") / "extensions"
STAGING_PREFIX = ".staging-"
LOCK = ".lock"
_SKIP = frozenset({"__pycache__"})
MAX_FILES = 10_000
MAX_UNPACKED = 256 * tarball.MIB


@dataclass
class ArchiveBudget:
    """The bounds of unpacking one extension archive (``broker.tarball.Unpacking``)."""

    files: int = 0
    unpacked: int = 0
    stopped: bool = False
    max_files: int = MAX_FILES
    max_unpacked: int = MAX_UNPACKED


def extract(archive: Path, dest: Path, label: str) -> None:
    """``broker.tarball.extract`` within an archive's bounds, its refusal as ``ArchiveRefused``."""
    try:
        tarball.extract(archive, dest, label, ArchiveBudget())
    except tarball.UnsafeArchive as exc:
        raise ArchiveRefused(str(exc)) from None


def pack(folder: Path) -> tuple[Manifest, bytes]:
    """The extension in ``folder`` (its manifest validated) as the bytes of its archive."""
    manifest = load_manifest(folder)
    files = _files(folder.resolve())
    raw = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for relative in _folders(files):
            tar.addfile(_entry(f"{TOP}/{relative}", tarfile.DIRTYPE, 0o755))
        for relative, path in files:
            data = path.read_bytes()
            mode = 0o755 if os.stat(path).st_mode & 0o111 else 0o644
            info = _entry(f"{TOP}/{relative}", tarfile.REGTYPE, mode)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return manifest, raw.getvalue()


def archive_name(manifest: Manifest) -> str:
    return f"{manifest.id}-{manifest.version}.tar.gz"


def _entry(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _files(root: Path) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP)
        here = Path(dirpath)
        for name in sorted(filenames):
            path = here / name
            if name.startswith("."):
                continue
            if path.is_symlink():
                raise ArchiveRefused(f"{path.relative_to(root)} is a symbolic link: pack the file itself")
            if path.is_file():
                found.append((path.relative_to(root).as_posix(), path))
        for d in dirnames:
            if (here / d).is_symlink():
                raise ArchiveRefused(
                    f"{(here / d).relative_to(root)} is a symbolic link: pack the folder itself"
                )
    return sorted(found)


def _folders(files: list[tuple[str, Path]]) -> list[str]:
    folders = {"/".join(rel.split("/")[:i]) for rel, _ in files for i in range(1, rel.count("/") + 1)}
    return sorted(folders)


def unpack(home: Path, release: Release, archive: Path) -> Manifest:
    """Unpack a verified archive into its own folder of the home and check its manifest is
    exactly the pinned one; return that manifest. A folder unpacked before is used as it is."""
    final = home / FOLDER / release.extension / f"{release.version}-{release.sha256[:16]}"
    if not final.is_dir():
        staging = final.parent / f"{STAGING_PREFIX}{secrets.token_hex(8)}"
        with _unpacking(home):
            try:
                extract(archive, staging, release.label)
                _check(release, load_manifest(staging))
                staging.rename(final)
            except ManifestError as exc:
                raise ArchiveRefused(
                    f"{release.label}: the archive's manifest has {len(exc.issues)} problem(s); not installed"
                ) from None
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    manifest = load_manifest(final)
    _check(release, manifest)
    return manifest


@contextlib.contextmanager
def _unpacking(home: Path) -> Iterator[None]:
    """Hold the unpackings' lock shared while this one may leave a staging folder behind."""
    folder = home / FOLDER
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def sweep_staging(home: Path) -> list[str]:
    """Remove the staging folders that killed unpackings left; name them (relative to the home).

    Runs only while no unpacking is live in any process (the lock is free); otherwise it leaves
    everything for a later start. Never raises an OSError."""
    folder = home / FOLDER
    try:
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return []  # no unpacking ever ran here
    removed: list[str] = []
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with os.scandir(folder) as extensions:
            parents = [Path(e.path) for e in extensions if e.is_dir(follow_symlinks=False)]
        for parent in parents:
            with os.scandir(parent) as entries:
                leftovers = [
                    Path(e.path)
                    for e in entries
                    if e.name.startswith(STAGING_PREFIX) and e.is_dir(follow_symlinks=False)
                ]
            for leftover in leftovers:
                shutil.rmtree(leftover, ignore_errors=True)
                if not leftover.exists():
                    removed.append(leftover.relative_to(home).as_posix())
    except OSError:
        pass  # a live unpacking holds the lock, or the folder cannot be read: leave it
    finally:
        os.close(fd)
    return removed


def _check(release: Release, manifest: Manifest) -> None:
    if manifest.id != release.extension or manifest.version != release.version:
        raise ArchiveRefused(
            f"{release.label}: the archive holds {manifest.id}@{manifest.version}, not what the index "
            "says; not installed"
        )
    if manifest.digest() != release.manifest_digest:
        raise ArchiveRefused(
            f"{release.label}: the archive's manifest is not the one the signed index pins (its digest "
            "differs); not installed"
        )
