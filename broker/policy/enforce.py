"""The organisation's policy at the broker's steps that are not the declaration: a built-in
call's extension or app, a confirmed write about to be sent, the audit record of a refusal,
and stopping what a new policy forbids. ``broker.resolution`` asks it of every declared call;
``Broker`` calls these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from broker import approval
from broker.activity import Activity
from broker.apps.spec import APP_CONNECTION
from broker.audit import AuditLog, AuditRecord
from broker.context import AppInstance, CallContext, ExtensionFrame
from broker.errors import CallError, ErrorCode, PolicyRefusal, SettingsError
from broker.manifest import Manifest
from broker.policy import decide
from broker.policy.decide import Refusal
from broker.policy.source import PolicyState, in_force
from broker.resolution import Resolved, policy_refusal, profile_reaches
from broker.settings import Home

Load = Callable[[Path], Manifest]


@dataclass(frozen=True)
class PolicyStop:
    """An extension the organisation's policy stopped: why, and how many running calls of it
    were cancelled."""

    workspace: str
    extension: str
    reason: str
    cancelled: int


@dataclass(frozen=True)
class PolicyChange:
    """The organisation's policy changed: the policy now, and what it stopped."""

    state: PolicyState
    stops: tuple[PolicyStop, ...]

    @property
    def notice(self) -> str:
        """What the window says ("" when there is nothing to say)."""
        if self.state.refused:
            return self.state.refused[0].message
        if not self.stops:
            return ""
        names = ", ".join(sorted({s.extension for s in self.stops}))
        cancelled = sum(s.cancelled for s in self.stops)
        running = f"; {cancelled} running call(s) cancelled" if cancelled else ""
        return f"Your organisation's policy stopped {names}{running}. {self.stops[0].reason}"


def builtin_refusal(home: Home, ctx: CallContext, load: Load) -> Refusal | None:
    """What the policy says of a built-in call's extension or app (``helm.state``, an app's
    resource reads); Helm's own parts and agents have their own rules."""
    state = in_force()
    if not state.managed or not isinstance(ctx.who, ExtensionFrame | AppInstance):
        return None
    try:
        settings = home.settings()
        ws = settings.workspace(ctx.workspace)
    except SettingsError:
        return None  # the handler refuses a call it cannot place
    decision = approval.check(ws, ctx.extension, load, state)
    if decision.forbidden is not None:
        return Refusal(decision.forbidden.rule, decision.message)
    manifest = decision.manifest
    conn = manifest.connection(APP_CONNECTION) if manifest is not None and manifest.app is not None else None
    if conn is None:
        return None
    reaches, who = profile_reaches(settings, conn)
    return decide.call(state, conn.kind, False, reaches, who, app=True)


def before_sending(home: Home, r: Resolved) -> None:
    """Raise the policy's refusal of a confirmed write, which may have changed while the dialog
    was open."""
    state = in_force()
    if not state.managed:
        return
    try:
        settings = home.settings()
    except SettingsError as exc:
        raise CallError(ErrorCode.UNAVAILABLE, "Helm's settings cannot be read") from exc
    ws = settings.workspaces.get(r.ctx.workspace)
    installed = ws.extensions.get(r.ctx.extension) if ws is not None else None
    origin = installed.origin if installed is not None else None
    refusal = decide.extension(state, r.ctx.extension, r.manifest, origin) or policy_refusal(
        settings, r.manifest, r.call.connection, True, state
    )
    if refusal is not None:
        raise refusal.error()


def audit_refusal(
    audit: AuditLog, ctx: CallContext, connection: str, operation: str, kind: str, err: PolicyRefusal
) -> None:
    """A call the policy refused, in the audit log (the rule and why; never an argument)."""
    record = AuditRecord(
        workspace=ctx.workspace, extension=ctx.extension, connection=connection, kind=kind,
        operation=operation, decision="refused", outcome="policy", title=f"policy rule {err.rule}",
        reason=err.message, requester=ctx.who.role, instance=ctx.instance,
    )  # fmt: skip
    audit.record(record)


class PolicyWatch:
    """Stops what the policy forbids each time it changes (``Broker.policy_stops``)."""

    def __init__(self, home: Home, activity: Activity, load: Load) -> None:
        self.home, self.activity, self.load = home, activity, load
        self._seen: PolicyState | None = None

    def stops(self) -> PolicyChange | None:
        state = in_force()
        if state is self._seen:
            return None
        self._seen = state
        if not state.managed:  # no policy forbids anything: no manifest needs reading for it
            return PolicyChange(state, ())
        try:
            settings = self.home.settings()
        except SettingsError:
            return PolicyChange(state, ())
        stops: list[PolicyStop] = []
        for ws in settings.workspaces.values():
            for ext_id in sorted(ws.extensions):
                decision = approval.check(ws, ext_id, self.load, state)
                if decision.forbidden is None:
                    continue
                err = CallError(ErrorCode.REFUSED, decision.message)
                cancelled = self.activity.cancel(ws.name, ext_id, err)
                stops.append(PolicyStop(ws.name, ext_id, decision.message, cancelled))
        return PolicyChange(state, tuple(stops))
