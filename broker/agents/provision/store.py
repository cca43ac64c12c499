"""Where adapters live in the Helm home, and the ledger of what is installed.

Layout (``<home>/agents/``)::

    ledger.json            {"version": 1, "adapters": {NAME: {"install": DIR, "version": V,
                                                              "installed_at": ISO, "previous": DIR|null}}}
    installs/DIR/          one complete install: receipt.json + node_modules/…
    staging/TMP/           an install being built (never referenced by the ledger)
    trash/TMP/             an install being deleted
    .lock                  held by whoever changes any of the above

An install becomes visible in two atomic steps: its finished folder is renamed from
``staging/`` into ``installs/``, then the ledger is replaced to point at it. A process killed
at any moment leaves either the old state or the new one, plus leftovers in ``staging/`` that
the next operation sweeps away. Removal renames into ``trash/`` first, so a half-deleted tree
is never at a path the ledger names. The ledger keeps each adapter's previous install (an
agent started before an upgrade may still be running from it); older ones are pruned.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from broker.agents.provision.errors import ProvisionError
from broker.atomic import write_atomic

LEDGER_VERSION = 1
RECEIPT = "receipt.json"
TREE = "node_modules"


@dataclass(frozen=True)
class LedgerEntry:
    install: str
    version: str
    installed_at: str
    previous: str | None = None


class Store:
    def __init__(self, home: Path) -> None:
        self.root = home / "agents"
        self.installs = self.root / "installs"
        self.staging = self.root / "staging"
        self.trash = self.root / "trash"
        self.ledger_path = self.root / "ledger.json"

    @contextlib.asynccontextmanager
    async def locked(self, patience: float = 900.0) -> AsyncIterator[None]:
        """Hold the store's lock (across processes); waits at most ``patience`` seconds."""
        for folder in (self.root, self.installs, self.staging, self.trash):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            await _acquire(fd, patience)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # -- the ledger ------------------------------------------------------------------------
    def ledger(self) -> dict[str, LedgerEntry]:
        try:
            raw: Any = json.loads(self.ledger_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, ValueError):
            raise ProvisionError(
                f"{self.ledger_path} is unreadable; it was left as it is (move it away)"
            ) from None
        try:
            if raw["version"] != LEDGER_VERSION:
                raise ValueError(raw["version"])
            return {str(n): LedgerEntry(**e) for n, e in raw["adapters"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ProvisionError(
                f"{self.ledger_path} is malformed; it was left as it is (move it away)"
            ) from None

    def save_ledger(self, entries: dict[str, LedgerEntry]) -> None:
        raw = {"version": LEDGER_VERSION, "adapters": {n: asdict(e) for n, e in sorted(entries.items())}}
        write_atomic(self.ledger_path, (json.dumps(raw, indent=2) + "\n").encode("utf-8"))

    # -- install folders -------------------------------------------------------------------
    def new_staging(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="install-", dir=self.staging))

    def publish(self, staged: Path, name: str) -> Path:
        """Move a finished install into place under a new name, durably."""
        target = self.installs / name
        os.rename(staged, target)  # fails rather than merge if the name exists
        _fsync_dir(self.installs)
        _fsync_dir(self.staging)
        return target

    def discard(self, folder: Path) -> None:
        """Remove an install or staging folder: renamed out of sight first, then deleted."""
        if not folder.exists():
            return
        doomed = Path(tempfile.mkdtemp(prefix="removed-", dir=self.trash))
        os.rename(folder, doomed / "tree")
        shutil.rmtree(doomed, ignore_errors=True)

    def sweep(self) -> list[str]:
        """Delete leftovers of killed runs and installs the ledger no longer keeps; name them."""
        for folder in (self.staging, self.trash):
            for leftover in folder.iterdir():
                shutil.rmtree(leftover, ignore_errors=True)
        kept = {n for e in self.ledger().values() for n in (e.install, e.previous) if n}
        pruned = sorted(p.name for p in self.installs.iterdir() if p.name not in kept)
        for name in pruned:
            self.discard(self.installs / name)
        return pruned

    # -- receipts ----------------------------------------------------------------------------
    def write_receipt(self, staged: Path, receipt: dict[str, Any]) -> None:
        write_atomic(staged / RECEIPT, (json.dumps(receipt, indent=2, sort_keys=True) + "\n").encode("utf-8"))

    def read_receipt(self, install: Path) -> dict[str, Any] | None:
        try:
            with (install / RECEIPT).open(encoding="utf-8") as fh:
                raw = json.loads(fh.read(1024 * 1024))
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        return raw if isinstance(raw, dict) else None


async def _acquire(fd: int, patience: float) -> None:
    # flock has no timeout, and a thread blocked in it cannot be cancelled: poll instead.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if loop.time() >= deadline:
                raise ProvisionError(
                    "another Helm is installing agent adapters; try again when it is done"
                ) from None
            await asyncio.sleep(0.2)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
