"""Extracting a verified gzip tar archive into a new folder, refusing anything unsafe.

The one safe extractor Helm has: agent adapters' npm tarballs (``broker.agents.provision``) and
extension archives from catalogues (``broker.catalogue``) both unpack through it, and only after
their digest matched a signed pin. Even so the archive is read as data:

* the first path component (``package/`` by npm's convention, which Helm's archives follow) is
  dropped;
* an absolute path, a ``..`` component, a backslash or a NUL is refused (``UnsafeArchive``);
* links, devices and FIFOs are skipped, so the tree holds only regular files and folders Helm
  created itself — no symlink can redirect a later write;
* files are created new (``O_EXCL | O_NOFOLLOW``): two entries for one file fail the unpacking;
* modes are reduced to 0644, or 0755 where the archive has an execute bit;
* the unpacked size and file count are bounded across everything one ``Unpacking`` covers.
"""

from __future__ import annotations

import os
import tarfile
import zlib
from pathlib import Path
from typing import IO, Protocol

from broker.errors import HelmError

MIB = 1024 * 1024
_CHUNK = 1024 * 1024


class UnsafeArchive(HelmError):
    """An archive is not a valid gzip tar, holds an entry Helm will not extract, or is too big."""


class Unpacking(Protocol):
    """What one unpacking (or several that share bounds) has used, and may use."""

    files: int
    unpacked: int
    stopped: bool

    @property
    def max_files(self) -> int: ...

    @property
    def max_unpacked(self) -> int: ...


def extract(tgz: Path, dest: Path, label: str, budget: Unpacking) -> None:
    """Unpack ``tgz`` into ``dest`` (created here); ``label`` names the archive in errors."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(tgz, mode="r|gz") as archive:
            for member in archive:
                if budget.stopped:
                    raise UnsafeArchive(f"{label}: installation abandoned")
                _extract_member(archive, member, dest, label, budget)
    except (tarfile.TarError, zlib.error, EOFError) as exc:
        raise UnsafeArchive(
            f"{label}: the tarball is not a valid gzip tar archive ({type(exc).__name__})"
        ) from None
    except OSError as exc:
        raise UnsafeArchive(f"{label}: cannot unpack the tarball ({exc.strerror})") from None


def _extract_member(
    archive: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, label: str, budget: Unpacking
) -> None:
    relative = member_path(member.name, label)
    if relative is None:
        return
    target = dest.joinpath(*relative)
    if member.isdir():
        target.mkdir(mode=0o755, parents=True, exist_ok=True)
        return
    if not member.isfile():
        return  # links, devices, FIFOs: npm skips them too
    _charge(member.size, label, budget)
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    source = archive.extractfile(member)
    if source is None:
        raise UnsafeArchive(f"{label}: cannot read {member.name!r} from the tarball")
    mode = 0o755 if member.mode & 0o111 else 0o644
    _write_new(target, source, member.size, mode, label)


def member_path(name: str, label: str) -> list[str] | None:
    """The path below the archive's top folder, or None for the top folder itself."""
    if "\\" in name or "\x00" in name or name.startswith("/"):
        raise UnsafeArchive(f"{label}: the tarball holds an unsafe path {name!r}")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeArchive(f"{label}: the tarball holds a path that escapes its folder: {name!r}")
    return parts[1:] or None


def _charge(size: int, label: str, budget: Unpacking) -> None:
    budget.files += 1
    budget.unpacked += size
    if budget.files > budget.max_files:
        raise UnsafeArchive(f"{label}: it unpacks to more than {budget.max_files} files")
    if budget.unpacked > budget.max_unpacked:
        raise UnsafeArchive(f"{label}: it unpacks to more than {budget.max_unpacked // MIB} MiB")


def _write_new(target: Path, source: IO[bytes], size: int, mode: int, label: str) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except FileExistsError:
        raise UnsafeArchive(
            f"{label}: the tarball writes {target.name!r} twice, or over another package"
        ) from None
    with os.fdopen(fd, "wb") as out:
        remaining = size
        while remaining > 0:
            chunk = source.read(min(_CHUNK, remaining))
            if not chunk:
                raise UnsafeArchive(f"{label}: the tarball ends inside {target.name!r}")
            out.write(chunk)
            remaining -= len(chunk)
    os.chmod(target, mode)  # the umask may have narrowed it
