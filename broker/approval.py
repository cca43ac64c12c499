"""Whether an extension may make calls: the one decision every part of Helm asks.

``decide`` is pure: given what the settings record about an extension in a workspace, its
manifest as loaded now and what the organisation's policy says of it (``broker.policy``, which
outranks the user: a forbidden extension stands ``FORBIDDEN`` even when approved), it returns
an ``ApprovalDecision`` — where the extension stands and, for anything short of approved, a
message for a person that says how to fix it. ``check`` reads the
facts and decides; the broker (every call), the CLI (``helm ext list``), the main window and
``helm dev`` (which extensions run, which need review), OAuth2 Connect (whose scopes count) and
agents all ask it, so the answer and its wording are the same everywhere::

    decision = approval.check(workspace, "com.example.board")
    if not decision.allows_calls:
        raise CallError(ErrorCode.REFUSED, decision.message)

An approval covers the manifest's digest (``Manifest.digest``: id, name, version, permissions,
connections, and an app's pinned part): an extension renamed or given another version after
its approval needs a review again, since every dialog names it by its name.
What kinds pin beside it (MCP tool definitions) is checked by the kind at each call; the one
change a call makes to an approval is ``record_first_contact``: tools not pinned when the user
approved (their server was not set up or did not answer) are pinned on first contact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from broker.errors import CallError, ErrorCode, ManifestError
from broker.manifest import Manifest
from broker.manifest import load as load_manifest
from broker.policy import decide as policy_decide
from broker.policy import in_force
from broker.policy.decide import Refusal
from broker.policy.source import PolicyState
from broker.settings import Home, InstalledExtension, Workspace


class Standing(StrEnum):
    """Where an extension stands, in the order ``decide`` checks it."""

    NOT_INSTALLED = "not installed"
    INVALID = "invalid manifest"
    FORBIDDEN = "refused by your organisation's policy"
    NEVER_APPROVED = "not approved"
    STALE = "changed since approval"
    DISABLED = "disabled"
    CURRENT = "approved"


@dataclass(frozen=True)
class ApprovalDecision:
    """The answer of ``decide``; ``message`` is written for the user and says what to do."""

    standing: Standing
    message: str
    installed: InstalledExtension | None = None
    manifest: Manifest | None = None
    forbidden: Refusal | None = None
    """What the organisation's policy says when it forbids the extension (``FORBIDDEN``)."""

    @property
    def allows_calls(self) -> bool:
        return self.standing is Standing.CURRENT

    @property
    def approved(self) -> bool:
        """The approval matches the manifest (the extension may still be disabled)."""
        return self.standing in (Standing.CURRENT, Standing.DISABLED)

    @property
    def needs_review(self) -> bool:
        return self.standing in (Standing.NEVER_APPROVED, Standing.STALE)

    def pins(self, connection_id: str) -> Mapping[str, Any]:
        """What the approval pinned for one connection (``{}`` when nothing is pinned yet)."""
        approval = self.installed.approval if self.installed is not None else None
        pinned = approval.pins.get(connection_id) if approval is not None else None
        return pinned if pinned is not None and isinstance(pinned, Mapping) else {}


def decide(
    workspace: str,
    extension: str,
    installed: InstalledExtension | None,
    manifest: Manifest | ManifestError | None,
    forbidden: Refusal | None = None,
) -> ApprovalDecision:
    """Where ``extension`` stands in ``workspace``.

    ``installed`` is the settings' record (None when it is not installed); ``manifest`` the
    manifest loaded from its folder now, or the error that loading it raised; ``forbidden``
    what the organisation's policy says of it (``broker.policy.decide.extension``), which
    outranks any approval: a forbidden extension makes no call, approved or not.
    """
    if installed is None or manifest is None:
        return ApprovalDecision(Standing.NOT_INSTALLED, _not_installed(workspace, extension))
    if isinstance(manifest, ManifestError):
        message = (
            f"the manifest of {extension} has {len(manifest.issues)} problem(s): "
            "run `helm ext lint` on its folder, fix them, then approve it again"
        )
        return ApprovalDecision(Standing.INVALID, message, installed)
    if forbidden is not None:
        message = f"{extension}: {forbidden.message}"
        return ApprovalDecision(Standing.FORBIDDEN, message, installed, manifest, forbidden)
    if installed.approval is None:
        approve = _approve(workspace, extension, manifest)
        message = f"{extension} is not approved yet: run {approve} or approve it in Helm"
        return ApprovalDecision(Standing.NEVER_APPROVED, message, installed, manifest)
    if installed.approval.digest != manifest.digest():
        message = (
            f"{extension} changed since it was approved (its permissions or connections): "
            f"review and approve it again with {_approve(workspace, extension, manifest)} or in Helm"
        )
        return ApprovalDecision(Standing.STALE, message, installed, manifest)
    if not installed.enabled:
        message = (
            f"{extension} is disabled in workspace {workspace}: enable it with "
            f"`helm ext enable -w {workspace} {extension}` or in Helm"
        )
        return ApprovalDecision(Standing.DISABLED, message, installed, manifest)
    return ApprovalDecision(Standing.CURRENT, f"{extension} is approved", installed, manifest)


def _approve(workspace: str, extension: str, manifest: Manifest) -> str:
    """The command that reviews and approves it: an MCP App's own review shows what its
    approval pins (the HTML, CSP and tools), which the extension review does not."""
    app = manifest.app
    if app is not None:
        return f"`helm app add -w {workspace} -s {app.server} {app.uri}`"
    return f"`helm ext approve -w {workspace} {extension}`"


def _not_installed(workspace: str, extension: str) -> str:
    return (
        f"{extension} is not installed in workspace {workspace}: install it with "
        f"`helm ext install -w {workspace} DIR` or from Helm's menu"
    )


def check(
    workspace: Workspace,
    extension: str,
    load: Callable[[Path], Manifest] = load_manifest,
    policy: PolicyState | None = None,
) -> ApprovalDecision:
    """Read the settings' record, the manifest and the organisation's policy (``policy``: the
    one in force now unless given), then ``decide``. ``load`` lets the broker use its cache of
    parsed manifests."""
    installed = workspace.extensions.get(extension)
    manifest: Manifest | ManifestError | None = None
    forbidden = None
    if installed is not None:
        try:
            manifest = load(installed.path)
        except ManifestError as exc:
            manifest = exc
        state = in_force() if policy is None else policy
        if state.managed:
            loaded = manifest if isinstance(manifest, Manifest) else None
            # The catalogue it came from, if any, for ``extensions.catalogues``.
            forbidden = policy_decide.extension(state, extension, loaded, installed.origin)
    return decide(workspace.name, extension, installed, manifest, forbidden)


def record_first_contact(
    home: Home, workspace: str, extension: str, digest: str, connection_id: str, pin: Mapping[str, Any]
) -> Mapping[str, Any]:
    """Store ``pin`` for a connection that had none; return the pin now in force.

    Only into the approval the call was checked against (same digest): if the user approved
    again meanwhile, the call is refused rather than pinned into an approval nobody checked.
    If another call pinned the connection first, its pin stays and is returned.
    """
    with home.update() as settings:
        ext = settings.workspace(workspace).extensions.get(extension)
        if ext is None or ext.approval is None or ext.approval.digest != digest:
            raise CallError(
                ErrorCode.REFUSED, f"the approval of {extension} changed during this call; call again"
            )
        current = ext.approval.pins.get(connection_id)
        if isinstance(current, Mapping) and current:
            return current
        ext.approval.pins[connection_id] = dict(pin)
        return pin
