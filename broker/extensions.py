"""Installing, reviewing, approving, enabling and removing extensions in a workspace.

An extension is installed by reference to its folder. Installing validates the manifest; it
needs no profile, server or database to exist yet, and it does not approve.

Approval binds what the user saw. ``review`` takes a snapshot (``Reviewed``): the manifest's
review and digest, and what each pinning kind reads now (MCP tool definitions) with what changed
since the last approval. Whatever shows the review — the CLI, the review dialog, ``helm dev`` —
passes that snapshot to ``approve``, which refuses with ``ApprovalChanged`` (writing nothing)
when the manifest or a pinned definition differs from the snapshot::

    reviewed = await extensions.review(broker, "ws", "com.example.board")
    show(reviewed.review, reviewed.changes, reviewed.pinning)   # then, on the user's Approve:
    await extensions.approve(broker, reviewed)

An update from a catalogue is reviewed the same way, from the folder it was unpacked to
(``review(..., update=folder)``); the installed version keeps running until ``approve`` puts
the update's folder and its approval in place together.

A server that is not set up or does not answer at review is not pinned then: its tools are
pinned at the extension's first call to it (trust on first use, recorded in the audit log and
shown by the next review). Whether an extension may call at all is ``broker.approval``'s
decision (``Broker.standing``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from broker.approval import ApprovalDecision, Standing
from broker.apps.spec import APP_CONNECTION
from broker.broker import Broker
from broker.errors import ApprovalChanged, CallError, PolicyError, SettingsError
from broker.kinds import KINDS
from broker.kinds.base import Connection, PinReviewer
from broker.manifest import Manifest, Review
from broker.manifest import load as load_manifest
from broker.policy import PolicyState, in_force
from broker.policy import decide as policy_decide
from broker.policy.decide import Refusal
from broker.resolution import profile_reaches
from broker.settings import Approval, Home, InstalledExtension, Workspace


@dataclass(frozen=True)
class Reviewed:
    """What the user is shown before approving; ``approve`` binds to it.

    ``pins`` is what each pinning connection pins, as read at review (a connection whose
    server could not be read keeps its earlier pin, or has none and is pinned at first
    contact); ``changes`` says what differs from the last approval's pins; ``pinning`` says,
    per connection, when its tools were or will be pinned, where that is not at this approval.
    """

    workspace: str
    extension: str
    review: Review
    decision: ApprovalDecision
    pins: Mapping[str, Mapping[str, Any]]
    changes: tuple[str, ...] = ()
    pinning: tuple[str, ...] = ()
    update: Path | None = None
    """The folder of the version under review, when it is to replace the installed one."""

    @property
    def digest(self) -> str:
        return self.review.digest

    @property
    def approved_before(self) -> bool:
        """Whether an earlier approval exists (this review is about a change)."""
        return self.decision.standing is Standing.STALE


def install(home: Home, workspace: str, folder: Path, origin: str | None = None) -> Manifest:
    """Register the extension in ``folder`` with ``workspace`` (not yet approved); ``origin`` is
    the catalogue that vouched for it (``broker.catalogue``), None for a folder of the user's."""
    manifest = load_manifest(folder)
    state = in_force()
    refusal = policy_decide.extension(state, manifest.id, manifest, origin)
    refusal = refusal or _app_server(home, state, manifest)
    if refusal is not None:
        raise PolicyError(f"{manifest.id} was not installed: {refusal.message}")
    with home.update() as settings:
        ws = settings.workspace(workspace)
        previous = ws.extensions.get(manifest.id)
        if previous is not None and previous.path.resolve() != manifest.folder:
            raise SettingsError(f"{manifest.id} is already installed from {previous.path}; remove it first")
        ws.extensions[manifest.id] = InstalledExtension(
            manifest.id, manifest.folder, True, previous.approval if previous else None, origin
        )
    return manifest


def _app_server(home: Home, state: PolicyState, manifest: Manifest) -> Refusal | None:
    """What the organisation's policy says of an MCP App's server (``apps.servers``)."""
    conn = manifest.connection(APP_CONNECTION) if manifest.app is not None and state.managed else None
    if conn is None:
        return None
    reaches, who = profile_reaches(home.settings(), conn)
    return policy_decide.call(state, conn.kind, False, reaches, who, app=True)


async def review(broker: Broker, workspace: str, extension: str, *, update: Path | None = None) -> Reviewed:
    """The snapshot to show the user; raises SettingsError (not installed, no workspace) or
    ManifestError (invalid manifest). ``update``: review the version in that folder instead,
    which ``approve`` then puts in place of the installed one (a catalogue update)."""
    decision = broker.standing(workspace, extension)
    installed = decision.installed
    if installed is None:
        raise SettingsError(decision.message)
    manifest = (
        broker.manifest(workspace, extension) if update is None else _update_manifest(extension, update)
    )
    if update is not None:
        decision = replace(decision, standing=Standing.STALE, manifest=manifest)
    ws = broker.home.settings().workspace(workspace)
    previous = installed.approval
    pins: dict[str, Mapping[str, Any]] = {}
    changes: list[str] = []
    pinning: list[str] = []
    for conn in manifest.connections:
        cid, adapter = conn.id, await _pinning(broker, conn)
        old = previous.pins.get(cid) if previous is not None else None
        if adapter is None:
            continue
        if isinstance(old, Mapping) and old.get("first_contact"):
            pinning.append(
                f"[{cid}] tools pinned at first contact on {old['first_contact']} (trust on first use)"
            )
        try:
            pins[cid] = dict(await adapter.pin(ws, conn))
            if isinstance(old, Mapping) and old:
                changes += [f"[{cid}] {c}" for c in await adapter.pin_changes(ws, conn, old)]
        except CallError as err:
            if isinstance(old, Mapping) and old:
                pins[cid] = old  # what was pinned before stays pinned
                pinning.append(f"[{cid}] cannot check the tools now ({err.message}); the earlier pins stay")
            else:
                pinning.append(f"[{cid}] not pinned now ({err.message}); its tools will be pinned at "
                               "the first call (trust on first use)")  # fmt: skip
    shown = reviewed_with_warnings(manifest, ws, broker.home.path)
    return Reviewed(workspace, extension, shown, decision, pins, tuple(changes), tuple(pinning), update)


def _update_manifest(extension: str, folder: Path) -> Manifest:
    manifest = load_manifest(folder)
    if manifest.id != extension:
        raise SettingsError(f"{folder} holds {manifest.id}, not an update of {extension}")
    return manifest


def reviewed_with_warnings(manifest: Manifest, ws: Workspace, home: Path) -> Review:
    """The manifest's review with what each kind warns about its connections in ``ws``."""
    review = manifest.review()
    shown = []
    for conn, lines in zip(manifest.connections, review.connections, strict=True):
        found = KINDS[conn.kind].review_warnings(conn, ws, home)
        shown.append(replace(lines, warnings=lines.warnings + found) if found else lines)
    return replace(review, connections=tuple(shown))


async def approve(broker: Broker, reviewed: Reviewed) -> Approval:
    """Approve exactly what ``reviewed`` showed; ``ApprovalChanged`` (nothing written) when the
    manifest or a pinned definition changed since."""
    workspace, extension = reviewed.workspace, reviewed.extension
    decision = broker.standing(workspace, extension)
    if decision.standing is Standing.FORBIDDEN:
        raise PolicyError(decision.message)
    if reviewed.update is None:
        manifest = broker.manifest(workspace, extension)
    else:
        manifest = _update_manifest(extension, reviewed.update)
        installed = broker.home.settings().workspace(workspace).extensions.get(extension)
        origin = installed.origin if installed is not None else None
        refusal = policy_decide.extension(in_force(), extension, manifest, origin)  # the version it would be
        if refusal is not None:
            raise PolicyError(f"{extension}: {refusal.message}")
    if manifest.digest() != reviewed.digest:
        raise ApprovalChanged(
            f"the manifest of {extension} changed while you reviewed it; nothing was approved — "
            "review it again"
        )
    ws = broker.home.settings().workspace(workspace)
    for conn in manifest.connections:
        await _still_pinned(broker, ws, conn, reviewed)
    pins = {cid: dict(pin) for cid, pin in reviewed.pins.items()}
    approval = Approval(reviewed.digest, datetime.now(UTC).isoformat(timespec="seconds"), pins)
    with broker.home.update() as settings:
        ext = settings.workspace(workspace).extensions.get(extension)
        if ext is None:
            raise SettingsError(f"{extension!r} is not installed in {workspace!r}")
        ext.approval = approval
        if reviewed.update is not None:
            ext.path = manifest.folder  # the update lands with its approval, in one write
    return approval


async def _still_pinned(broker: Broker, ws: Workspace, conn: Connection, reviewed: Reviewed) -> None:
    cid, adapter = conn.id, await _pinning(broker, conn)
    pinned = reviewed.pins.get(cid)
    if adapter is None or not pinned:
        return
    try:
        changes = await adapter.pin_changes(ws, conn, pinned)
    except CallError:
        return  # cannot read them now: the reviewed pins are stored, and every call checks them
    if changes:
        raise ApprovalChanged(
            f"[{cid}] changed while you reviewed it ({changes[0]}); nothing was approved — review it again"
        )


async def review_and_approve(broker: Broker, workspace: str, extension: str) -> Approval:
    """Review and approve in one step, for callers that show the user nothing (scripts, the
    demo, tests). Anything that shows a review passes its ``Reviewed`` to ``approve``."""
    return await approve(broker, await review(broker, workspace, extension))


async def _pinning(broker: Broker, conn: Connection) -> PinReviewer | None:
    spec = KINDS.get(conn.kind)
    if spec is None:
        return None  # a kind not in this build has nothing to pin
    running = await broker.kind(spec)
    return running if isinstance(running, PinReviewer) else None


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
