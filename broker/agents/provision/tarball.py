"""Extracting one verified npm tarball into the staging tree, refusing anything unsafe.

Called only after the tarball's sha512 matched its pin. Even so the archive is read as data:

* the first path component (``package/`` by npm's convention) is dropped, as npm does;
* an absolute path, a ``..`` component, a backslash or a NUL is refused (``ArchiveError``);
* links, devices and FIFOs are skipped, as npm skips them, so the tree holds only regular
  files and folders Helm created itself — no symlink can redirect a later write;
* files are created new (``O_EXCL | O_NOFOLLOW``): two entries for one file fail the install;
* modes are reduced to 0644, or 0755 where the archive has an execute bit or the package's
  ``bin`` names the file (npm marks those executable at install time too);
* the unpacked size and file count are bounded across the whole installation.
"""

from __future__ import annotations

import json
import os
import tarfile
import zlib
from pathlib import Path
from typing import IO

from broker.agents.provision.errors import ArchiveError
from broker.agents.provision.registry import MIB, InstallBudget

_CHUNK = 1024 * 1024


def extract(tgz: Path, dest: Path, label: str, budget: InstallBudget) -> None:
    """Unpack ``tgz`` into ``dest`` (created here); ``label`` names the package in errors."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(tgz, mode="r|gz") as archive:
            for member in archive:
                if budget.stopped:
                    raise ArchiveError(f"{label}: installation abandoned")
                _extract_member(archive, member, dest, label, budget)
        mark_executables(dest, label)
    except (tarfile.TarError, zlib.error, EOFError) as exc:
        raise ArchiveError(
            f"{label}: the tarball is not a valid gzip tar archive ({type(exc).__name__})"
        ) from None
    except OSError as exc:
        raise ArchiveError(f"{label}: cannot unpack the tarball ({exc.strerror})") from None


def _extract_member(
    archive: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, label: str, budget: InstallBudget
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
        raise ArchiveError(f"{label}: cannot read {member.name!r} from the tarball")
    mode = 0o755 if member.mode & 0o111 else 0o644
    _write_new(target, source, member.size, mode, label)


def mark_executables(dest: Path, label: str) -> None:
    """Make the package's ``bin`` files executable, as npm does when it links them.

    Publishers often pack them without the bit (codex-acp's native binary, for one); npm adds
    it at install time. No link is created: Helm runs the adapter's entry with Node itself.
    """
    try:
        manifest = json.loads((dest / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return  # a package without a readable package.json has no bin to mark
    bins = manifest.get("bin") if isinstance(manifest, dict) else None
    targets = [bins] if isinstance(bins, str) else list(bins.values()) if isinstance(bins, dict) else []
    for target in targets:
        relative = member_path(f"package/{target}", label) if isinstance(target, str) else None
        path = dest.joinpath(*relative) if relative else None
        if path is not None and path.is_file() and not path.is_symlink():
            path.chmod(0o755)


def member_path(name: str, label: str) -> list[str] | None:
    """The path below the package folder, or None for the top folder itself."""
    if "\\" in name or "\x00" in name or name.startswith("/"):
        raise ArchiveError(f"{label}: the tarball holds an unsafe path {name!r}")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"{label}: the tarball holds a path that escapes its folder: {name!r}")
    return parts[1:] or None


def _charge(size: int, label: str, budget: InstallBudget) -> None:
    budget.files += 1
    budget.unpacked += size
    if budget.files > budget.limits.max_files:
        raise ArchiveError(f"{label}: the adapter unpacks to more than {budget.limits.max_files} files")
    if budget.unpacked > budget.limits.max_unpacked:
        raise ArchiveError(
            f"{label}: the adapter unpacks to more than {budget.limits.max_unpacked // MIB} MiB"
        )


def _write_new(target: Path, source: IO[bytes], size: int, mode: int, label: str) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except FileExistsError:
        raise ArchiveError(
            f"{label}: the tarball writes {target.name!r} twice, or over another package"
        ) from None
    with os.fdopen(fd, "wb") as out:
        remaining = size
        while remaining > 0:
            chunk = source.read(min(_CHUNK, remaining))
            if not chunk:
                raise ArchiveError(f"{label}: the tarball ends inside {target.name!r}")
            out.write(chunk)
            remaining -= len(chunk)
    os.chmod(target, mode)  # the umask may have narrowed it
