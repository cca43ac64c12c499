"""Installing, approving, enabling and removing extensions in a workspace.

An extension is installed by reference to its folder. Installing validates the manifest; it
does not approve. Approval records the digest of what review showed plus what each kind pins
(for example MCP tool definitions); any later change to those makes calls return ``refused``
until the user approves again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from broker.broker import Broker
from broker.errors import CallError, ProfileError, SettingsError
from broker.kinds.base import PinReviewer
from broker.manifest import Manifest
from broker.manifest import load as load_manifest
from broker.settings import Approval, Home, InstalledExtension


def install(home: Home, workspace: str, folder: Path) -> Manifest:
    """Register the extension in ``folder`` with ``workspace`` (not yet approved)."""
    manifest = load_manifest(folder)
    with home.update() as settings:
        ws = settings.workspace(workspace)
        previous = ws.extensions.get(manifest.id)
        if previous is not None and previous.path.resolve() != manifest.folder:
            raise SettingsError(f"{manifest.id} is already installed from {previous.path}; remove it first")
        ws.extensions[manifest.id] = InstalledExtension(
            manifest.id, manifest.folder, True, previous.approval if previous else None
        )
    return manifest


async def approve(broker: Broker, workspace: str, extension: str) -> Approval:
    """Approve the extension's current manifest: its digest and each kind's pins."""
    manifest = broker.manifest(workspace, extension)
    ws = broker.home.settings().workspace(workspace)
    pins: dict[str, Any] = {}
    for conn in manifest.connections:
        try:
            adapter = broker.adapter(str(conn["kind"]))
        except CallError:
            continue  # a kind not in this build has nothing to pin
        pinned = dict(await adapter.pin(ws, conn))
        if pinned:
            pins[str(conn["id"])] = pinned
    approval = Approval(manifest.digest(), datetime.now(UTC).isoformat(timespec="seconds"), pins)
    with broker.home.update() as settings:
        ext = settings.workspace(workspace).extensions.get(extension)
        if ext is None:
            raise SettingsError(f"{extension!r} is not installed in {workspace!r}")
        ext.approval = approval
    return approval


async def pin_changes(broker: Broker, workspace: str, extension: str) -> list[str]:
    """What changed since approval in what kinds pinned (e.g. an MCP tool's schema), one line
    per change, for review to show before the user approves again."""
    ws = broker.home.settings().workspace(workspace)
    ext = ws.extensions.get(extension)
    if ext is None or ext.approval is None:
        return []
    lines: list[str] = []
    for conn in broker.manifest(workspace, extension).connections:
        pinned = ext.approval.pins.get(str(conn["id"]))
        if not pinned:
            continue
        try:
            adapter = broker.adapter(str(conn["kind"]))
            if isinstance(adapter, PinReviewer):
                changes = await adapter.pin_changes(ws, conn, pinned)
                lines += [f"[{conn['id']}] {change}" for change in changes]
        except (CallError, ProfileError) as err:
            lines.append(f"[{conn['id']}] cannot check what changed: {err}")
    return lines


def approval_current(broker: Broker, workspace: str, extension: str) -> bool:
    ext = broker.home.settings().workspace(workspace).extensions.get(extension)
    if ext is None or ext.approval is None:
        return False
    return ext.approval.digest == broker.manifest(workspace, extension).digest()


def set_enabled(home: Home, workspace: str, extension: str, enabled: bool) -> None:
    with home.update() as settings:
        ext = settings.workspace(workspace).extensions.get(extension)
        if ext is None:
            raise SettingsError(f"{extension!r} is not installed in {workspace!r}")
        ext.enabled = enabled


def remove(home: Home, workspace: str, extension: str) -> None:
    with home.update() as settings:
        if settings.workspace(workspace).extensions.pop(extension, None) is None:
            raise SettingsError(f"{extension!r} is not installed in {workspace!r}")
