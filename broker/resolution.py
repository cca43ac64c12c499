"""From a request to the typed call a kind runs: the declaration, checked once.

``Resolutions.resolve`` takes who asks (``CallContext``), the connection, operation and
arguments, and returns a ``Resolved``: the extension's standing (``broker.approval``: installed, manifest
valid, allowed by the organisation's policy, approved with the same digest, enabled), the
connection and operation on the manifest's allowlist, plain JSON arguments, ``permissions.write``
for a write, what the policy says of this call (its kind, its write, what its profile reaches:
``broker.policy``), and the pins approval recorded. ``pin_first_contact`` pins what a kind
pins when approval could not (audited).
``Manifests`` is the stat-checked cache of parsed manifests every call reads (with the home's
kept verdicts, ``broker.verdicts``, a manifest unchanged since an earlier process is not
validated by the schema again); ``Resolutions`` keeps each decision while the readings it was
made on stay the same. Each raises ``CallError`` for a request that must be refused; the
broker makes it the envelope.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from broker import approval
from broker.arguments import check_arguments
from broker.audit import AuditLog, AuditRecord
from broker.context import CallContext
from broker.errors import (
    CallError,
    ErrorCode,
    HomeWriteError,
    ManifestError,
    PolicyRefusal,
    ProfileError,
    SettingsError,
)
from broker.jsonutil import digest
from broker.kinds import KINDS, AnySpec
from broker.kinds.base import Call, Connection, Kind
from broker.manifest import MANIFEST_FILE, Manifest
from broker.manifest import load as load_manifest
from broker.policy import PolicyState, in_force
from broker.policy import decide as policy_decide
from broker.policy.decide import Refusal
from broker.profiles import Reach
from broker.settings import Home, Settings, Workspace
from broker.verdicts import Verdicts

SETTINGS_UNREADABLE = (
    "Helm's settings cannot be read: settings.json in Helm's home folder is damaged "
    "(the user must fix it or move it away)"
)


@dataclass(frozen=True)
class Resolved:
    """A request that passed the declaration: the manifest, the typed call, its kind."""

    ctx: CallContext
    manifest: Manifest
    call: Call[Connection]
    kind: str


class _Loaded(NamedTuple):
    """A parsed manifest and the stamp of the file it came from."""

    file: str
    stamp: tuple[int, int, int]
    manifest: Manifest


class Manifests:
    """Parsed manifests by folder, parsed again whenever the file changed on disk."""

    def __init__(self, verdicts: Verdicts | None = None) -> None:
        self._loaded: dict[Path, _Loaded] = {}
        self._verdicts = verdicts

    @classmethod
    def in_home(cls, home: Path) -> Manifests:
        """The cache with the verdicts kept in ``home``."""
        return cls(Verdicts.in_home(home))

    def load(self, folder: Path) -> Manifest:
        """The folder's manifest: every call stats it (the file's name is kept as text, so the
        check costs the stat alone); raises ManifestError with the reason."""
        cached = self._loaded.get(folder)
        file = cached.file if cached is not None else os.path.join(folder, MANIFEST_FILE)
        try:
            st = os.stat(file)
        except OSError:
            return load_manifest(folder, self._verdicts)  # raises ManifestError with the reason
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if cached is not None and cached.stamp == stamp:
            return cached.manifest
        manifest = load_manifest(folder, self._verdicts)
        self._loaded[folder] = _Loaded(file, stamp, manifest)
        return manifest


class _Decided(NamedTuple):
    """What resolving a declared call decided, and the readings it was decided on."""

    settings: Settings
    policy: PolicyState
    folder: Path
    manifest: Manifest
    spec: AnySpec
    workspace: Workspace
    conn: Connection
    write: bool
    pins: Mapping[str, Any]

    def resolved(self, ctx: CallContext, operation: str, args: Mapping[str, Any]) -> Resolved:
        # A read runs now, on the settings and policy just checked; a write reads them again
        # once the user has confirmed (a profile changed meanwhile must not be sent to).
        read = not self.write
        call = Call(
            ctx, self.workspace, self.conn, operation, dict(args), self.write, self.pins,
            self.settings if read else None, self.policy if read else None,
        )  # fmt: skip
        return Resolved(ctx, self.manifest, call, self.conn.kind)


def _decide(
    home: Home,
    manifests: Callable[[Path], Manifest],
    ctx: CallContext,
    connection_id: str,
    operation: str,
    args: Mapping[str, Any],
) -> _Decided:
    try:
        settings = home.settings()
    except SettingsError as exc:  # the extension cannot fix it: say what the user must fix
        raise CallError(ErrorCode.UNAVAILABLE, SETTINGS_UNREADABLE) from exc
    try:
        workspace = settings.workspace(ctx.workspace)
    except SettingsError as exc:
        raise CallError(ErrorCode.NOT_CONFIGURED, f"workspace {ctx.workspace!r} is not configured") from exc
    policy = in_force()  # one look at the policy files for the whole call
    decision = approval.check(workspace, ctx.extension, manifests, policy)
    if decision.forbidden is not None:
        raise PolicyRefusal(decision.forbidden.rule, decision.message)
    if not decision.allows_calls or decision.manifest is None or decision.installed is None:
        raise CallError(ErrorCode.REFUSED, decision.message)
    manifest = decision.manifest
    conn = manifest.connection(connection_id)
    if conn is None:
        raise CallError(ErrorCode.REFUSED, f"connection {connection_id!r} is not declared")
    write = conn.operations.get(operation)
    if write is None:
        raise CallError(ErrorCode.REFUSED, f"operation {operation!r} is not declared for {connection_id!r}")
    spec = KINDS[conn.kind]
    check_arguments(args, spec.scalar_args)
    if write and not manifest.may_write:
        raise CallError(ErrorCode.REFUSED, "the manifest does not declare permissions.write")
    refusal = policy_refusal(settings, manifest, conn, write, policy)
    if refusal is not None:
        raise refusal.error()
    pins = decision.pins(connection_id)
    return _Decided(settings, policy, decision.installed.path, manifest, spec, workspace, conn, write, pins)


KEEP_DECIDED = 512
"""Most decisions ``Resolutions`` keeps (each is one declared operation of one extension)."""


class Resolutions:
    """The resolution of every call of a broker, deciding again only what may have changed.

    A decision depends on nothing but the settings, the policy in force, the extension's
    manifest and the kind registry, each read at every call: one stat of the settings
    file, one look at the policy files, one stat of the manifest. When all four are the very
    objects a call's decision was made on, the next call of the same operation by the same
    extension is decided the same way; only its arguments are checked again. Anything else, a
    refusal included, is decided afresh.
    """

    def __init__(self, home: Home, manifests: Manifests) -> None:
        self._home = home
        self._manifests = manifests
        self._decided: dict[tuple[str, str, str, str], _Decided] = {}

    def resolve(
        self, ctx: CallContext, connection_id: str, operation: str, args: Mapping[str, Any]
    ) -> Resolved:
        key = (ctx.workspace, ctx.extension, connection_id, operation)
        kept = self._decided.get(key)
        if kept is not None:
            if self._current(kept):
                check_arguments(args, kept.spec.scalar_args)  # all the rest passed, on these readings
                return kept.resolved(ctx, operation, args)
            del self._decided[key]  # made on readings that are gone: never kept past them
        decided = _decide(self._home, self._manifests.load, ctx, connection_id, operation, args)
        if len(self._decided) >= KEEP_DECIDED:
            self._decided.clear()
        self._decided[key] = decided
        return decided.resolved(ctx, operation, args)

    def _current(self, kept: _Decided) -> bool:
        """Whether ``kept`` was decided on what the settings, policy, kinds and manifest are now."""
        try:
            if self._home.settings() is not kept.settings:
                return False
        except SettingsError:
            return False
        if in_force() is not kept.policy or KINDS.get(kept.conn.kind) is not kept.spec:
            return False
        try:
            return self._manifests.load(kept.folder) is kept.manifest
        except ManifestError:
            return False


def policy_refusal(
    settings: Settings, manifest: Manifest, conn: Connection, write: bool, state: PolicyState
) -> Refusal | None:
    """What the organisation's policy (``state``: the one the call was checked against) says of
    one call through ``conn``: its kind, whether it writes, and what the connection's profile
    reaches (its URLs, its program, its host)."""
    if not state.managed:
        return None
    reaches, who = profile_reaches(settings, conn)
    return policy_decide.call(state, conn.kind, write, reaches, who, app=manifest.app is not None)


def profile_reaches(settings: Settings, conn: Connection) -> tuple[tuple[Reach, ...], str]:
    """What the profile ``conn`` uses reaches, and how to name it ("service 'github'"); nothing
    when it has no profile, or one that is missing or invalid (the kind says so)."""
    spec = KINDS.get(conn.kind)
    profiles = spec.profiles if spec is not None else None
    name = conn.profile
    if profiles is None or profiles.reaches is None or name is None:
        return (), f"connection {conn.id!r}"
    who = f"{profiles.noun} {name!r}"
    raw = settings.profiles(profiles.section).get(name)
    if raw is None:
        return (), who
    try:
        return profiles.reaches(profiles.parse(name, raw)), who
    except ProfileError:
        return (), who


async def pin_first_contact(home: Home, audit: AuditLog, r: Resolved, adapter: Kind[Any]) -> Resolved:
    """Pin what ``adapter`` pins (a kind that pins), at the connection's first contact."""
    when = datetime.now(UTC).isoformat(timespec="seconds")
    pin = {**await adapter.pin(r.call.workspace, r.call.connection), "first_contact": when}
    try:
        pinned = approval.record_first_contact(
            home, r.ctx.workspace, r.ctx.extension, r.manifest.digest(), r.call.connection_id, pin
        )
    except SettingsError as exc:
        raise CallError(ErrorCode.NOT_CONFIGURED, "Helm's settings cannot be updated") from exc
    except HomeWriteError as exc:  # a full disk, say: the pin is not recorded, so the call is not made
        raise CallError(
            ErrorCode.UNAVAILABLE,
            f"Helm could not record its first contact with {r.call.connection_id!r} "
            f"in its settings ({exc.strerror}); nothing was sent",
        ) from exc
    if pinned is pin:
        audit.record(
            AuditRecord(
                workspace=r.ctx.workspace,
                extension=r.ctx.extension,
                connection=r.call.connection_id,
                kind=r.kind,
                operation=r.call.operation,
                decision="pinned",
                outcome="first contact",
                title="pinned at first contact (trust on first use)",
                request_digest=digest(pin),
                requester=r.ctx.who.role,
                instance=r.ctx.instance,
            )
        )
    return replace(r, call=replace(r.call, approval=pinned))
