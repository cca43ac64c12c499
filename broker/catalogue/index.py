"""A catalogue's index: which extensions it offers, each version pinned by digest, with its status.

Format 1 (``index.json``, signed as a whole by ``index.sig``, see ``broker.signatures``)::

    {"format": 1, "serial": 7,
     "extensions": {"com.example.board": {"versions": {"1.2.0": {
         "archive": "com.example.board-1.2.0.tar.gz",   # a file name beside index.json
         "size": 4096, "sha256": "<64 hex>",             # of the archive's exact bytes
         "manifest_digest": "<64 hex>",                  # Manifest.digest() of what it unpacks to
         "capabilities": ["[gh] http — service github", "  read list: GET /issues", …],
         "status": "active" | "deprecated" | "withdrawn",
         "reason": "why it is deprecated or withdrawn"}}}}}

``serial`` grows with every index the publisher signs: Helm remembers the highest it has seen
per catalogue and refuses an older one (a rollback to an index that still lists a withdrawn
version). Parsing is strict: anything unexpected refuses the whole index.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from broker.catalogue.errors import IndexRefused
from broker.jsonutil import DuplicateKeyError, loads_strict

FORMAT = 1
MAX_INDEX = 8 * 1024 * 1024
_HEX64 = re.compile(r"[0-9a-f]{64}")
_ID = re.compile(r"[a-z][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)+")
_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?")
_ARCHIVE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,200}")


class Status(StrEnum):
    ACTIVE = "active"
    DEPRECATED = "deprecated"
    WITHDRAWN = "withdrawn"


@dataclass(frozen=True)
class Release:
    """One version of one extension, as the signed index pins it."""

    extension: str
    version: str
    archive: str
    size: int
    sha256: str
    manifest_digest: str
    capabilities: tuple[str, ...]
    status: Status = Status.ACTIVE
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.extension}@{self.version}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "archive": self.archive,
            "size": self.size,
            "sha256": self.sha256,
            "manifest_digest": self.manifest_digest,
            "capabilities": list(self.capabilities),
            "status": self.status.value,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Index:
    """A verified, parsed index; ``digest`` is the sha256 of its exact bytes."""

    serial: int
    releases: Mapping[str, Mapping[str, Release]]
    digest: str = ""

    def release(self, extension: str, version: str) -> Release | None:
        return self.releases.get(extension, {}).get(version)

    def newest(self, extension: str) -> Release | None:
        """The highest version that is not withdrawn (None when there is none)."""
        offered = [r for r in self.releases.get(extension, {}).values() if r.status is not Status.WITHDRAWN]
        return max(offered, key=lambda r: version_key(r.version), default=None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "serial": self.serial,
            "extensions": {
                ext: {"versions": {v: versions[v].to_json() for v in sorted(versions, key=version_key)}}
                for ext, versions in sorted(self.releases.items())
            },
        }


def version_key(version: str) -> tuple[int, int, int, int, str]:
    """Semantic-version order: 1.2.0-beta < 1.2.0 < 1.10.0."""
    found = _VERSION.fullmatch(version)
    if found is None:
        return (-1, -1, -1, -1, version)
    major, minor, patch, tail = found.groups()
    pre = tail[1:] if tail and tail.startswith("-") else ""
    return (int(major), int(minor), int(patch), 0 if pre else 1, pre)


def parse_index(data: bytes, digest: str, catalogue: str) -> Index:
    """The index in ``data`` (already signature-verified); ``IndexRefused`` for anything unexpected."""
    try:
        raw = loads_strict(data)
    except (ValueError, DuplicateKeyError, RecursionError):
        raise IndexRefused(
            f"catalogue {catalogue}: its index is not valid JSON; nothing from it is used"
        ) from None
    try:
        return _index(raw, digest)
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexRefused(
            f"catalogue {catalogue}: its index is malformed ({exc}); nothing from it is used"
        ) from None


def _index(raw: Any, digest: str) -> Index:
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ValueError(f"not an index of format {FORMAT}")
    serial = raw["serial"]
    if not isinstance(serial, int) or isinstance(serial, bool) or serial < 0:
        raise ValueError("serial must be a whole number")
    releases: dict[str, dict[str, Release]] = {}
    for ext, entry in _obj(raw["extensions"], "extensions").items():
        if not _ID.fullmatch(ext):
            raise ValueError(f"{ext!r} is not an extension id")
        versions = _obj(_obj(entry, ext)["versions"], f"{ext}.versions")
        releases[ext] = {v: _release(ext, v, _obj(r, f"{ext}@{v}")) for v, r in versions.items()}
    return Index(serial, releases, digest)


def _release(ext: str, version: str, raw: Mapping[str, Any]) -> Release:
    where = f"{ext}@{version}"
    if not _VERSION.fullmatch(version):
        raise ValueError(f"{where}: not a semantic version")
    archive, sha256, manifest_digest = raw["archive"], raw["sha256"], raw["manifest_digest"]
    if not isinstance(archive, str) or not _ARCHIVE.fullmatch(archive) or ".." in archive:
        raise ValueError(f"{where}: the archive must be a plain file name beside the index")
    for name, value in (("sha256", sha256), ("manifest_digest", manifest_digest)):
        if not isinstance(value, str) or not _HEX64.fullmatch(value):
            raise ValueError(f"{where}: {name} must be 64 lower-case hex digits")
    size, capabilities, reason = raw["size"], raw.get("capabilities", []), raw.get("reason", "")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"{where}: size must be a whole number of bytes")
    if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
        raise ValueError(f"{where}: capabilities must be a list of lines")
    status = Status(raw.get("status", "active"))
    if not isinstance(reason, str) or (status is Status.WITHDRAWN and not reason.strip()):
        raise ValueError(f"{where}: a withdrawn version must say why (reason)")
    return Release(ext, version, archive, size, sha256, manifest_digest, tuple(capabilities), status, reason)


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"{where} must be an object")
    return value
