"""Installing from a catalogue, finding updates, landing them on approval, stepping back one.

Nothing lands silently. ``check`` reads each catalogue an extension of the workspace came from,
verifies its index (``broker.catalogue.source``), and for every newer version downloads,
verifies and unpacks it beside the installed one, then says what it adds to what was approved
(``broker.catalogue.capabilities``). The installed version keeps running: an update lands only
through ``approve_update``, with the same review (``broker.extensions.review``) the user sees
for any install, and the folder and approval change in one write. ``rollback`` puts the
version before it back, with the approval the user gave that version.

A version the catalogue withdrew is stopped through the kill switch with the catalogue's
reason (``Activity.stop(by="catalogue")``); approving an update lifts that stop.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from broker import extensions
from broker.broker import Broker
from broker.catalogue import archive, capabilities
from broker.catalogue.errors import CatalogueFault, CatalogueSetupError, ReleaseRefused
from broker.catalogue.index import Index, Release, Status, version_key
from broker.catalogue.source import CatalogueReader
from broker.catalogue.store import CatalogueEntry, CatalogueStore, Provenance
from broker.errors import ManifestError, SettingsError
from broker.manifest import Manifest
from broker.settings import Approval

BY = "catalogue"


@dataclass(frozen=True)
class Fetched:
    """A release downloaded, verified against the signed index and unpacked (not installed)."""

    catalogue: str
    release: Release
    manifest: Manifest

    @property
    def notice(self) -> str:
        return deprecation(self.catalogue, self.release)


def deprecation(catalogue: str, release: Release) -> str:
    """The publisher's note on a deprecated version ("" for any other)."""
    if release.status is not Status.DEPRECATED:
        return ""
    why = f": {release.reason}" if release.reason else ""
    return f"catalogue {catalogue} deprecates {release.label}{why}"


@dataclass(frozen=True)
class Update:
    """A newer version waiting for the user's approval, and what it adds to what was approved."""

    workspace: str
    extension: str
    installed_version: str
    fetched: Fetched
    diff: capabilities.CapabilityDiff

    @property
    def version(self) -> str:
        return self.fetched.release.version


@dataclass(frozen=True)
class Withdrawal:
    """An installed version its catalogue withdrew (and Helm stopped)."""

    workspace: str
    extension: str
    version: str
    catalogue: str
    reason: str

    @property
    def message(self) -> str:
        return f"catalogue {self.catalogue} withdrew {self.extension} {self.version}: {self.reason}"


@dataclass(frozen=True)
class UpdateCheck:
    updates: tuple[Update, ...] = ()
    withdrawn: tuple[Withdrawal, ...] = ()
    problems: tuple[str, ...] = ()
    """Catalogues that could not be read or releases refused, in words."""
    notices: tuple[str, ...] = ()


def catalogue_entry(
    home: Path, name: str, extra: Mapping[str, CatalogueEntry] | None = None
) -> CatalogueEntry:
    found = CatalogueStore(home).configured(extra).get(name)
    if found is None:
        raise CatalogueSetupError(
            f"no catalogue named {name!r}: add it with `helm catalogue add {name} URL --key FILE`"
        )
    return found


async def fetch(
    home: Path, entry: CatalogueEntry, extension: str, version: str | None = None,
    client: httpx.AsyncClient | None = None,
) -> Fetched:  # fmt: skip
    """``extension`` at ``version`` (default: its newest that is not withdrawn), verified and unpacked."""
    index = await CatalogueReader(entry, client).index(CatalogueStore(home))
    return await _download(home, entry, pick(index, entry.name, extension, version), client)


def pick(index: Index, catalogue: str, extension: str, version: str | None) -> Release:
    """The release asked for, or ``ReleaseRefused`` (not offered, or withdrawn, with the reason)."""
    if extension not in index.releases:
        raise ReleaseRefused(f"catalogue {catalogue} does not offer {extension}")
    release = index.newest(extension) if version is None else index.release(extension, version)
    if release is None and version is None:
        raise ReleaseRefused(f"catalogue {catalogue} withdrew every version of {extension}")
    if release is None:
        raise ReleaseRefused(f"catalogue {catalogue} does not offer {extension} {version}")
    if release.status is Status.WITHDRAWN:
        raise ReleaseRefused(
            f"catalogue {catalogue} withdrew {release.label}: {release.reason}. It was not installed"
        )
    return release


async def _download(
    home: Path, entry: CatalogueEntry, release: Release, client: httpx.AsyncClient | None
) -> Fetched:
    downloads = home / "catalogue" / "downloads"
    downloads.mkdir(mode=0o700, parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=downloads) as tmp:
        path = Path(tmp) / "archive.tar.gz"
        await CatalogueReader(entry, client).archive(release, path)
        manifest = await asyncio.to_thread(archive.unpack, home, release, path)
    return Fetched(entry.name, release, manifest)


def record_install(home: Path, workspace: str, fetched: Fetched) -> None:
    """Remember where an extension installed from a catalogue came from."""
    release = fetched.release
    with CatalogueStore(home).update() as state:
        state.installed.setdefault(workspace, {})[release.extension] = Provenance(
            fetched.catalogue, release.version, release.sha256
        )


@dataclass
class _Reading:
    """The indexes one check read, each once."""

    home: Path
    entries: Mapping[str, CatalogueEntry]
    client: httpx.AsyncClient | None
    indexes: dict[str, Index | str] = field(default_factory=dict)

    async def index(self, name: str) -> Index | str:
        if name not in self.indexes:
            entry = self.entries.get(name)
            if entry is None:
                self.indexes[name] = (
                    f"catalogue {name} is no longer configured: its extensions are not checked"
                )
            else:
                try:
                    self.indexes[name] = await CatalogueReader(entry, self.client).index(
                        CatalogueStore(self.home)
                    )
                except CatalogueFault as fault:
                    self.indexes[name] = str(fault)
        return self.indexes[name]


async def check(
    broker: Broker, workspace: str, only: Collection[str] = (),
    extra: Mapping[str, CatalogueEntry] | None = None, client: httpx.AsyncClient | None = None,
) -> UpdateCheck:  # fmt: skip
    """What the catalogues offer the workspace's extensions now; stops withdrawn versions."""
    home = broker.home.path
    installed = CatalogueStore(home).read().installed.get(workspace, {})
    ws = broker.home.settings().workspace(workspace)
    reading = _Reading(home, CatalogueStore(home).configured(extra), client)
    updates, withdrawn, problems, notices = [], [], [], []
    for ext_id, prov in sorted(installed.items()):
        if (only and ext_id not in only) or ext_id not in ws.extensions:
            continue
        index = await reading.index(prov.catalogue)
        if isinstance(index, str):
            problems.append(index)
            continue
        current = index.release(ext_id, prov.version)
        if current is not None and current.status is Status.WITHDRAWN:
            gone = Withdrawal(workspace, ext_id, prov.version, prov.catalogue, current.reason)
            broker.activity.stop(workspace, ext_id, by=BY, reason=gone.message)
            withdrawn.append(gone)
        elif current is not None and current.status is Status.DEPRECATED:
            notices.append(deprecation(prov.catalogue, current))
        newest = index.newest(ext_id)
        if newest is None or version_key(newest.version) <= version_key(prov.version):
            continue
        try:
            fetched = await _download(home, reading.entries[prov.catalogue], newest, client)
            approved = broker.manifest(workspace, ext_id)
        except (CatalogueFault, ManifestError) as fault:
            problems.append(f"{ext_id}: {fault}")
            continue
        updates.append(
            Update(workspace, ext_id, prov.version, fetched, capabilities.diff(approved, fetched.manifest))
        )
    return UpdateCheck(tuple(updates), tuple(withdrawn), tuple(problems), tuple(notices))


async def review_update(broker: Broker, update: Update) -> extensions.Reviewed:
    """The usual review, of the update's version (what ``approve_update`` lands)."""
    return await extensions.review(
        broker, update.workspace, update.extension, update=update.fetched.manifest.folder
    )


async def approve_update(broker: Broker, update: Update, reviewed: extensions.Reviewed) -> Approval:
    """Land the update the user approved: its folder and approval in one write, the version
    before it kept for one step back, and a withdrawn version's stop lifted."""
    workspace, ext_id = update.workspace, update.extension
    before = broker.home.settings().workspace(workspace).extensions.get(ext_id)
    if before is None:
        raise SettingsError(f"{ext_id!r} is not installed in {workspace!r}")
    approval = await extensions.approve(broker, reviewed)
    release = update.fetched.release
    with CatalogueStore(broker.home.path).update() as state:
        old = state.installed.setdefault(workspace, {}).get(ext_id)
        previous = None
        if old is not None and before.approval is not None:
            previous = {
                "version": old.version,
                "sha256": old.sha256,
                "path": str(before.path),
                "approval": vars(before.approval),
            }
        state.installed[workspace][ext_id] = Provenance(
            update.fetched.catalogue, release.version, release.sha256, previous
        )
    _lift_withdrawal(broker, workspace, ext_id)
    return approval


def _lift_withdrawal(broker: Broker, workspace: str, extension: str) -> None:
    for stop in broker.activity.switch.stops():
        if (stop.workspace, stop.extension, stop.connection, stop.by) == (workspace, extension, None, BY):
            broker.activity.resume(workspace, extension)


async def rollback(
    broker: Broker, workspace: str, extension: str,
    extra: Mapping[str, CatalogueEntry] | None = None, client: httpx.AsyncClient | None = None,
) -> str:  # fmt: skip
    """Put back the version before the last update, with the approval the user gave it; return
    its version. Refused when there is none, or when its catalogue withdrew it."""
    home = broker.home.path
    prov = CatalogueStore(home).provenance(workspace, extension)
    if prov is None or prov.previous is None:
        raise SettingsError(f"{extension} has no earlier version to step back to in {workspace}")
    previous: dict[str, Any] = prov.previous
    index = await CatalogueReader(catalogue_entry(home, prov.catalogue, extra), client).index(
        CatalogueStore(home)
    )
    pick(index, prov.catalogue, extension, str(previous["version"]))  # refuses a withdrawn one
    raw = previous["approval"]
    approval = Approval(str(raw["digest"]), str(raw["approved_at"]), dict(raw.get("pins", {})))
    with broker.home.update() as settings:
        ext = settings.workspace(workspace).extensions.get(extension)
        if ext is None:
            raise SettingsError(f"{extension!r} is not installed in {workspace!r}")
        ext.path, ext.approval = Path(str(previous["path"])), approval
    with CatalogueStore(home).update() as state:
        state.installed[workspace][extension] = Provenance(
            prov.catalogue, str(previous["version"]), str(previous["sha256"])
        )
    return str(previous["version"])
