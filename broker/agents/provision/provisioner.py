"""Installing, verifying and re-provisioning agent adapters from the signed catalogue.

One installation: every pinned tarball of the adapter's tree (those this machine needs) is
downloaded into a staging folder, its sha512 checked against the catalogue, and only then
extracted; the finished tree is hashed, a receipt written beside it, and the folder renamed into
place before the ledger points at it. No install script runs: Node only ever runs the adapter's
entry script, when an agent starts.

Each start (``ensure``) re-hashes the tree and compares it with the receipt. A tampered or
missing install is provisioned again, an install from an older pin is replaced, and each of
these events is recorded in the audit log.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import httpx

from broker.agents.provision.catalogue import Adapter, Catalogue, Pinned
from broker.agents.provision.errors import ProvisionError
from broker.agents.provision.host import Host
from broker.agents.provision.registry import InstallBudget, InstallLimits, Registry
from broker.agents.provision.store import TREE, LedgerEntry, Store
from broker.agents.provision.tarball import extract
from broker.agents.provision.tree import tree_digest
from broker.audit import AuditLog, AuditRecord

RECEIPT_FORMAT = 1


class State(StrEnum):
    OK = "ok"
    MISSING = "missing"
    TAMPERED = "tampered"
    OUTDATED = "outdated"


@dataclass(frozen=True)
class Verification:
    adapter: str
    state: State
    detail: str
    folder: Path | None = None

    @property
    def ok(self) -> bool:
        return self.state is State.OK


@dataclass(frozen=True)
class Installed:
    adapter: str
    version: str
    folder: Path
    tree: str  # sha512 SRI of the installed tree
    files: int
    bytes: int
    tarballs: int
    downloaded: int
    pruned: tuple[str, ...]


@dataclass(frozen=True)
class Launch:
    """How to start a verified adapter: ``node <entry>``; ``event`` says what ``ensure`` did."""

    adapter: str
    node: str
    entry: Path
    folder: Path
    key_env: str | None
    event: str  # verified | installed | reprovisioned | upgraded

    @property
    def argv(self) -> list[str]:
        return [self.node, str(self.entry)]


class Provisioner:
    """Adapters of one verified ``Catalogue``, installed under one Helm home."""

    def __init__(
        self,
        home: Path,
        catalogue: Catalogue,
        client: httpx.AsyncClient,
        *,
        registry_url: str | None = None,
        audit: AuditLog | None = None,
        limits: InstallLimits | None = None,
        host: Host | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.store = Store(home)
        self.registry = Registry(client, registry_url)
        self.audit = audit if audit is not None else AuditLog(home / "audit.jsonl")
        self.limits = limits or InstallLimits()
        self.host = host or Host.current()

    # -- the public operations -----------------------------------------------------------------
    async def install(self, name: str) -> Installed:
        """Install ``name`` afresh from its pins (replacing a current install of it)."""
        adapter = self.catalogue.adapter(name)
        async with self.store.locked():
            installed = await self._install(adapter, keep_previous=True)
        self._record(adapter, "installed", "ok", f"{adapter.title} {adapter.version}")
        return installed

    async def verify(self, name: str) -> Verification:
        adapter = self.catalogue.adapter(name)
        async with self.store.locked():
            result = await self._check(adapter)
        if result.state is State.TAMPERED:
            self._record(adapter, "tampered", "detected", result.detail)
        return result

    async def ensure(self, name: str) -> Launch:
        """Verify ``name`` and provision it again if needed; how to start it."""
        adapter = self.catalogue.adapter(name)
        node = node_path()
        async with self.store.locked():
            found = await self._check(adapter)
            if found.ok and found.folder is not None:
                return _launch(adapter, node, found.folder, "verified")
            event = {State.MISSING: "installed", State.TAMPERED: "reprovisioned"}.get(found.state, "upgraded")
            try:
                installed = await self._install(adapter, keep_previous=found.state is State.OUTDATED)
            except ProvisionError:
                self._record(adapter, event, "failed", found.detail)
                raise
        self._record(adapter, event, "ok", found.detail)
        return _launch(adapter, node, installed.folder, event)

    async def remove(self, name: str) -> bool:
        """Forget ``name``'s installs and delete them; False when none was installed."""
        async with self.store.locked():
            ledger = self.store.ledger()
            if ledger.pop(name, None) is None:
                return False
            self.store.save_ledger(ledger)
            self.store.sweep()
        return True

    def installed(self) -> dict[str, LedgerEntry]:
        return self.store.ledger()

    # -- verification ----------------------------------------------------------------------------
    async def _check(self, adapter: Adapter) -> Verification:
        entry = self.store.ledger().get(adapter.name)
        if entry is None:
            return Verification(adapter.name, State.MISSING, "not installed")
        folder = self.store.installs / entry.install
        state, detail = await _compare(adapter, entry, folder, self.store.read_receipt(folder))
        return Verification(adapter.name, state, detail, folder)

    # -- installation ------------------------------------------------------------------------------
    async def _install(self, adapter: Adapter, *, keep_previous: bool) -> Installed:
        pins = adapter.tree_for(self.host)
        self.store.sweep()
        staged = self.store.new_staging()
        try:
            budget = InstallBudget(self.limits)
            await self._fetch_all(pins, staged, budget)
            receipt = await self._seal(adapter, staged / "install", len(pins))
            folder = self.store.publish(
                staged / "install", f"{adapter.name}-{adapter.version}-{secrets.token_hex(4)}"
            )
        finally:
            self.store.discard(staged)
        self._point_ledger(adapter, folder, receipt["installed_at"], keep_previous)
        pruned = tuple(self.store.sweep())
        return Installed(
            adapter.name, adapter.version, folder, receipt["tree_sha512"], receipt["files"],
            receipt["bytes"], len(pins), budget.downloaded, pruned,
        )  # fmt: skip

    async def _fetch_all(self, pins: tuple[Pinned, ...], staged: Path, budget: InstallBudget) -> None:
        downloads = staged / "downloads"
        downloads.mkdir()
        gate = asyncio.Semaphore(self.limits.parallel)
        # Extraction runs in threads, which a failing sibling cannot cancel: they are told to
        # stop and waited for, so nothing writes into the staging folder once this returns.
        workers = ThreadPoolExecutor(max_workers=self.limits.parallel, thread_name_prefix="helm-extract")

        async def one(index: int, pin: Pinned) -> None:
            async with gate:
                tgz = downloads / f"{index}.tgz"
                await self.registry.download(pin, tgz, budget)
                label = f"{pin.name}@{pin.version}"
                target = staged / "install" / pin.path
                await asyncio.get_running_loop().run_in_executor(workers, extract, tgz, target, label, budget)
                tgz.unlink()

        try:
            async with asyncio.TaskGroup() as group:
                for index, pin in enumerate(pins):
                    group.create_task(one(index, pin))
        except* ProvisionError as failed:
            raise failed.exceptions[0] from None
        finally:
            budget.stopped = True
            workers.shutdown(wait=True)

    async def _seal(self, adapter: Adapter, install: Path, tarballs: int) -> dict[str, Any]:
        entry = install / adapter.package_path / adapter.entry
        if not entry.is_file():
            raise ProvisionError(
                f"{adapter.name}: the package has no {adapter.entry}; the catalogue entry is wrong"
            )
        digest = await asyncio.to_thread(tree_digest, install / TREE)
        receipt: dict[str, Any] = {
            "format": RECEIPT_FORMAT,
            "adapter": adapter.name,
            "package": adapter.package,
            "version": adapter.version,
            "adapter_digest": adapter.digest,
            "catalogue_sha256": self.catalogue.digest,
            "tree_sha512": str(digest.integrity),
            "files": digest.files,
            "bytes": digest.bytes,
            "tarballs": tarballs,
            "host": self.host.to_json(),
            "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        self.store.write_receipt(install, receipt)
        return receipt

    def _point_ledger(self, adapter: Adapter, folder: Path, installed_at: str, keep_previous: bool) -> None:
        # The replaced install stays one round (an agent may still run from it), unless it was
        # tampered with: then the next sweep deletes it.
        ledger = self.store.ledger()
        old = ledger.get(adapter.name)
        previous = old.install if old is not None and keep_previous else None
        ledger[adapter.name] = LedgerEntry(folder.name, adapter.version, installed_at, previous)
        self.store.save_ledger(ledger)

    def _record(self, adapter: Adapter, decision: str, outcome: str, detail: str) -> None:
        title = f"{adapter.package}@{adapter.version}: {detail}"
        self.audit.record(
            AuditRecord("", "", adapter.name, "agent-adapter", "provision", decision, outcome, title)
        )


async def _compare(
    adapter: Adapter, entry: LedgerEntry, folder: Path, receipt: dict[str, Any] | None
) -> tuple[State, str]:
    if receipt is None or not _well_formed(receipt, adapter.name, entry.version):
        return State.TAMPERED, "the install's receipt is missing, unreadable or altered"
    if receipt["adapter_digest"] != adapter.digest:
        return State.OUTDATED, f"installed {entry.version}, the catalogue pins {adapter.version}"
    if not (folder / TREE).is_dir():
        return State.TAMPERED, "the installed tree is gone"
    digest = await asyncio.to_thread(tree_digest, folder / TREE)
    if str(digest.integrity) != receipt["tree_sha512"]:
        return State.TAMPERED, f"the installed files differ from the receipt ({digest.files} files now)"
    return State.OK, f"{adapter.version}, {digest.files} files verified"


def _well_formed(receipt: dict[str, Any], name: str, version: str) -> bool:
    fields = ("adapter_digest", "tree_sha512", "catalogue_sha256")
    return (
        receipt.get("format") == RECEIPT_FORMAT
        and receipt.get("adapter") == name
        and receipt.get("version") == version
        and all(isinstance(receipt.get(f), str) for f in fields)
    )


def node_path() -> str:
    node = shutil.which("node")
    if node is None:
        raise ProvisionError("Node.js is needed to run agent adapters: install Node.js 18 or later")
    return node


def _launch(adapter: Adapter, node: str, folder: Path, event: str) -> Launch:
    entry = folder / adapter.package_path / adapter.entry
    return Launch(adapter.name, node, entry, folder, adapter.key_env, event)
