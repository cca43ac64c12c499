"""What Helm keeps about extension catalogues: ``<home>/catalogues.json``, written atomically.

Format (version 1)::

    {"version": 1,
     "poll": false,                      # check for updates in the background (off unless turned on)
     "catalogues": {NAME: {"url": "https://… | http://127.0.0.1… | /a/folder", "key": "<PEM>"}},
     "seen": {NAME: {"serial": 7, "digest": "<sha256 of index.json>"}},
     "installed": {WORKSPACE: {EXT_ID: {"catalogue": NAME, "version": "1.2.0", "sha256": HEX,
                                        "previous": {"version": …, "sha256": …, "path": DIR,
                                                     "approval": {...}} | null}}}}

``catalogues`` are the ones the user added; ``configured`` adds those given by others (an
organisation's policy) without writing them here. ``seen`` is per catalogue name, whoever
configured it: the highest index serial verified, so an older index is refused (rollback).
``installed`` records where a workspace's extension came from and the one version it can step
back to. A file Helm cannot read is reported and left as it is; nothing is changed until it is
fixed or removed.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.catalogue.errors import CatalogueSetupError
from broker.errors import SettingsError
from broker.jsonutil import DuplicateKeyError, loads_strict
from broker.names import NAME_RULE, valid_name
from broker.signatures import public_pem

VERSION = 1
FILE_NAME = "catalogues.json"


@dataclass(frozen=True)
class CatalogueEntry:
    """One catalogue Helm may install from: its name, where its index is, the key it trusts."""

    name: str
    url: str
    key: str  # PEM of the Ed25519 public key


def policy_catalogues() -> dict[str, CatalogueEntry]:
    """The catalogues the organisation's policies in force name (``catalogues``), by name: they
    outrank the user's of the same name, and the user cannot remove them."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from broker.policy import in_force

    found: dict[str, CatalogueEntry] = {}
    for policy in in_force().policies:
        for rule in policy.catalogues:
            raw = Ed25519PublicKey.from_public_bytes(base64.b64decode(rule.public_key))
            found.setdefault(rule.name, CatalogueEntry(rule.name, rule.url, public_pem(raw).decode("ascii")))
    return found


@dataclass
class Provenance:
    """Where an installed extension came from, and the version before it (for one step back)."""

    catalogue: str
    version: str
    sha256: str
    previous: dict[str, Any] | None = None


@dataclass
class CatalogueState:
    poll: bool = False
    catalogues: dict[str, CatalogueEntry] = field(default_factory=dict)
    seen: dict[str, dict[str, Any]] = field(default_factory=dict)
    installed: dict[str, dict[str, Provenance]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "poll": self.poll,
            "catalogues": {n: {"url": c.url, "key": c.key} for n, c in sorted(self.catalogues.items())},
            "seen": dict(sorted(self.seen.items())),
            "installed": {
                ws: {ext: vars(p) for ext, p in sorted(exts.items())}
                for ws, exts in sorted(self.installed.items())
            },
        }


def check_name(name: str) -> str:
    if not valid_name(name):
        raise CatalogueSetupError(f"{name!r} is not a catalogue name: {NAME_RULE}")
    return name


class CatalogueStore:
    """``catalogues.json`` of one Helm home."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / FILE_NAME

    def read(self) -> CatalogueState:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return CatalogueState()
        except OSError as exc:
            raise SettingsError(f"cannot read {self.path} ({exc.strerror})") from None
        try:
            return _state(loads_strict(data))
        except (ValueError, DuplicateKeyError, RecursionError, KeyError, TypeError):
            raise SettingsError(
                f"{self.path} cannot be read; it was left as it is — fix or remove it"
            ) from None

    @contextlib.contextmanager
    def update(self) -> Iterator[CatalogueState]:
        """Read, let the caller change, write back atomically, under an exclusive lock."""
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.home / ".catalogues.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                state = self.read()
                yield state
                data = json.dumps(state.to_json(), indent=2, ensure_ascii=False) + "\n"
                write_atomic(self.path, data.encode("utf-8"), mode=0o600)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def configured(self, extra: Mapping[str, CatalogueEntry] | None = None) -> dict[str, CatalogueEntry]:
        """The catalogues Helm may install from: the user's, plus ``extra`` (those an organisation's
        policy adds or requires; on a name both use, ``extra`` wins, since it outranks the user).
        The one place the list is made: installing, update checks and rollback all ask here."""
        found = dict(self.read().catalogues)
        found.update(policy_catalogues())
        found.update(extra or {})
        return found

    def provenance(self, workspace: str, extension: str) -> Provenance | None:
        return self.read().installed.get(workspace, {}).get(extension)


def _state(raw: Any) -> CatalogueState:
    if not isinstance(raw, dict) or raw.get("version") != VERSION:
        raise ValueError("not a catalogues file of version 1")
    poll = raw.get("poll", False)
    if not isinstance(poll, bool):
        raise TypeError("poll")
    catalogues = {
        str(n): CatalogueEntry(check_name(str(n)), str(c["url"]), str(c["key"]))
        for n, c in dict(raw.get("catalogues", {})).items()
    }
    seen = {
        str(n): {"serial": int(s["serial"]), "digest": str(s["digest"])}
        for n, s in dict(raw.get("seen", {})).items()
    }
    installed = {
        str(ws): {str(ext): _provenance(p) for ext, p in dict(exts).items()}
        for ws, exts in dict(raw.get("installed", {})).items()
    }
    return CatalogueState(poll, catalogues, seen, installed)


def _provenance(raw: Any) -> Provenance:
    previous = raw.get("previous")
    if previous is not None and not isinstance(previous, dict):
        raise TypeError("previous")
    return Provenance(str(raw["catalogue"]), str(raw["version"]), str(raw["sha256"]), previous)
