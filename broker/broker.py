"""The broker: every call a page makes goes through ``Broker``.

The flow of one call: admission (rate limit and in-flight cap per workspace, extension and
frame; the kill switch and activity record, ``broker.activity``) → the declaration
(``broker.resolution``: the extension's standing, the connection and operation on the
allowlist, plain JSON arguments, pins a kind needs at first contact) → for a write, the write
pipeline (``broker.writes``: a redeemed token bound to the requester and the exact request,
audited before it is sent) → the kind's adapter → the kind's envelope. ``call``, ``request`` and
``request_json`` never raise (but for cancellation): anything an extension or a server can
cause is a contract error code in the envelope, and a failure inside Helm is ``unavailable``.

A built-in call (``broker.builtin``: ``helm.state``, an MCP App's resource reads, links and
model context) takes the same admission and activity hook, then its handler in place of the
manifest's allowlist and the kind.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from broker import approval, envelope, home_tidy, teams
from broker.activity import Activity, Watch
from broker.arguments import MAX_CALL_BYTES as MAX_CALL_BYTES
from broker.arguments import check_arguments
from broker.audit import AuditLog
from broker.builtin import STATE_CONNECTION, BuiltinKind, Handler
from broker.context import AppInstance, CallContext, ExtensionFrame, Requester
from broker.credentials import CredentialStore, open_store
from broker.decision_point import DecisionPoints
from broker.errors import CallError, ErrorCode, ManifestError, PolicyRefusal, SettingsError
from broker.export import AuditExporter, SinkConfig
from broker.jsonutil import DuplicateKeyError, loads_strict
from broker.kinds import KINDS
from broker.kinds.base import Call, Connection, Kind, PinReviewer
from broker.kinds.spec import KindSpec
from broker.manifest import Manifest
from broker.policy import enforce, managed
from broker.policy.enforce import PolicyChange
from broker.ratelimit import CallAdmission, instance_key
from broker.resolution import Manifests, Resolutions, Resolved, pin_first_contact
from broker.running import RunningKinds
from broker.settings import Home
from broker.summary import Confirmer, WriteSummary
from broker.tokens import TokenBook
from broker.widget_state import StateKind, StateStore
from broker.writes import Prepared, WritePipeline, WriteTarget

if TYPE_CHECKING:
    from broker.kinds.db.adapter import DbKind
    from broker.mcp.servers import McpServers

log = logging.getLogger("helm.broker")


Check = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class _Route:
    """How one admitted call goes on: a token, a confirmer, a refusal decided before the call
    was read, a built-in handler in place of the kind, or the requester's own check."""

    confirmation: str | None = None
    confirm: Confirmer | None = None
    refusal: CallError | None = None
    handler: Handler | None = None
    check: Check | None = None


class Broker:
    """Opened on a Helm home; use as ``async with Broker(home) as broker``."""

    def __init__(
        self,
        home: Path,
        *,
        credentials: CredentialStore | None = None,
        kinds: Mapping[str, Kind[Any]] | None = None,
    ) -> None:
        """``kinds``: running kinds by name, used instead of the ones the registry would build
        (``helm dev --replay`` answers every kind from fixtures)."""
        self.tidied = home_tidy.tidy(home)
        """What this start put right after a crash (temp files, torn log tails)."""
        self.home = Home(home)
        self.credentials = credentials if credentials is not None else open_store(home)
        self.export = AuditExporter(self._user_sinks, policy=managed.audit_sinks)
        """Audit (and activity) records to the sinks in effect (``broker.export``)."""
        self.audit = AuditLog(home / "audit.jsonl", tap=self.export.audit)
        self.tokens = TokenBook()
        self.admission = CallAdmission()
        self.activity = Activity(home)
        """Every call's record, and the kill switch (``broker.activity``)."""
        self.activity.subscribe(self.export.activity)
        self.points = DecisionPoints(self.home, self.credentials)
        """The organisation's decision point in effect (``broker.decision_point``)."""
        self.writes = WritePipeline(self.tokens, self.audit, self._settings_version, self.points)
        """The one write pipeline; Helm's own writers (the DB explorer) use it too."""
        self.state = StateStore(home)
        """The per-instance state behind ``helm.state`` (``broker.widget_state``)."""
        self.builtins: dict[str, BuiltinKind] = {STATE_CONNECTION: StateKind(self.state)}
        """The built-in connections every page has, by their ``$`` id (``broker.builtin``)."""
        self.running = RunningKinds(self.home, self.credentials, self.audit, kinds or {})
        """The running kinds, loaded off the loop (``broker.running``)."""
        self._pinning: dict[type, bool] = {}
        self._manifests = Manifests.in_home(home)
        self._resolutions = Resolutions(self.home, self._manifests)
        self._policy = enforce.PolicyWatch(self.home, self.activity, self._manifests.load)

    async def __aenter__(self) -> Self:
        self.home.ensure()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self.activity.flush()
        await self.running.aclose()
        await asyncio.to_thread(self.export.close)

    # -- public surface ------------------------------------------------------------------
    async def call(
        self,
        ctx: CallContext,
        connection_id: str,
        operation: str,
        args: Mapping[str, Any],
        *,
        confirmation: str | None = None,
    ) -> dict[str, Any]:
        """Run one call and return the kind's envelope."""
        return await self._admitted(ctx, connection_id, operation, args, _Route(confirmation=confirmation))

    async def describe_write(
        self, ctx: CallContext, connection_id: str, operation: str, args: Mapping[str, Any]
    ) -> WriteSummary:
        """Describe a write for the confirmation dialog and mint its one-time token.

        Raises ``CallError`` when the call would be refused anyway (nothing to confirm).
        """
        return await self.writes.describe(await self.write_target(ctx, connection_id, operation, args))

    async def write_target(
        self, ctx: CallContext, connection_id: str, operation: str, args: Mapping[str, Any]
    ) -> WriteTarget:
        """A declared write of the extension ``ctx`` names, checked as a call is (standing,
        allowlist, arguments, pins), for ``self.writes`` to confirm and send; the same target a
        write call has. Raises ``CallError`` when it would be refused (``refused`` for a read)."""
        resolved = self._resolve(ctx, connection_id, operation, args)
        if not resolved.call.write:
            raise CallError(ErrorCode.REFUSED, f"{operation!r} is not a write operation")
        resolved = await self._pinned(resolved)
        return self._target(resolved)

    async def request(
        self,
        ctx: CallContext,
        connection_id: str,
        operation: str,
        args: Mapping[str, Any],
        confirm: Confirmer,
        *,
        check: Check | None = None,
    ) -> dict[str, Any]:
        """The whole flow of one call from an extension, writes included.

        A read goes straight to the kind. A write is described once, ``confirm`` asks the
        user, and only a confirmation sends it with the token; a decline returns ``declined``.
        ``check``: the requester's own test (an app's tool still visible to apps), run once
        the call is admitted and allowed, before anything is sent; its ``CallError`` refuses.
        """
        return await self._admitted(ctx, connection_id, operation, args, _Route(confirm=confirm, check=check))

    async def builtin(
        self, ctx: CallContext, connection_id: str, operation: str, args: Mapping[str, Any], handler: Handler
    ) -> dict[str, Any]:
        """A built-in call (``broker.builtin``) through the one admission: ``handler`` runs in
        place of the kind and its data comes back in the plain envelope."""
        return await self._admitted(ctx, connection_id, operation, args, _Route(handler=handler))

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        """``request`` with JSON text in and out, for the web bridge; always an envelope."""
        if not all(isinstance(v, str) for v in (connection_id, operation, args_json)):
            err = CallError(ErrorCode.REFUSED, "the connection, operation and arguments must be text")
            result = envelope.failure("", err)
        elif len(args_json) > MAX_CALL_BYTES:
            # Refused unread (the bridge passes at most one character past the limit), and
            # counted against the rate limit like any other call.
            too_large = CallError(ErrorCode.TOO_LARGE, "the call message is larger than 256 KiB")
            result = await self._admitted(ctx, connection_id, operation, {}, _Route(refusal=too_large))
        else:
            try:
                args = loads_strict(args_json) if args_json else {}
            except (DuplicateKeyError, ValueError, RecursionError):
                err = CallError(ErrorCode.REFUSED, "the arguments are not valid JSON (or repeat a key)")
                result = await self._admitted(ctx, connection_id, operation, {}, _Route(refusal=err))
            else:
                result = await self.request(ctx, connection_id, operation, args, confirm)
        return self.activity.text_of(result)  # made once, when the call's size was recorded

    def manifest(self, workspace: str, extension: str) -> Manifest:
        """The current manifest of an installed extension (raises ManifestError/SettingsError)."""
        ws = self.home.settings().workspace(workspace)
        ext = ws.extensions.get(extension)
        if ext is None:
            raise SettingsError(f"extension {extension!r} is not installed in workspace {workspace!r}")
        return self._manifests.load(ext.path)

    def load_manifest(self, folder: Path) -> Manifest:
        """The manifest in ``folder`` from the broker's cache: read and validated again only
        when its file changed (raises ManifestError)."""
        return self._manifests.load(folder)

    def standing(self, workspace: str, extension: str) -> approval.ApprovalDecision:
        """Whether ``extension`` may make calls in ``workspace`` (raises SettingsError for a
        workspace that does not exist)."""
        return approval.check(self.home.settings().workspace(workspace), extension, self._manifests.load)

    async def kind[K](self, spec: KindSpec[Any, Any, K]) -> K:
        """The running part of a kind, typed by its spec (created on first use, one per broker):
        ``await broker.kind(MCP)`` is an ``McpKind``, so ``(await broker.kind(MCP)).list_tools(ws,
        name)`` needs no cast. The call pipeline reaches kinds the same way, by their registered
        spec. The first use imports the kind in a worker thread, awaited (``broker.running``)."""
        return await self.running.kind(spec)

    def kind_now[K](self, spec: KindSpec[Any, Any, K]) -> K:
        """``kind`` for a synchronous caller (a status a dialog shows as it opens): the running
        kind, imported on the calling thread if nothing loaded it yet. Prefer ``await kind``."""
        return self.running.kind_now(spec)

    async def preload(self, kinds: Iterable[str]) -> None:
        """Import these kinds now, side by side in worker threads (a kind that fails to load
        is reported by the call that needs it)."""
        await self.running.preload(kinds)

    async def mcp_servers(self) -> McpServers:
        """The live sessions with the user's MCP servers, one per (workspace, server): the mcp
        kind's tool calls and MCP Apps share them (``broker.mcp``)."""
        return await self.running.mcp_servers()

    def database(self) -> DbKind:
        """The ``db`` kind, typed: profiles and statements for Helm's own DB explorer (whose
        list of profiles is synchronous: ``kind_now``)."""
        from broker.kinds.db import DB

        return self.kind_now(DB)

    def _pins(self, adapter: Kind[Any]) -> bool:
        """Whether a kind pins what it calls (a protocol check is slow: asked once a class)."""
        pins = self._pinning.get(type(adapter))
        if pins is None:
            pins = self._pinning[type(adapter)] = isinstance(adapter, PinReviewer)
        return pins

    async def _running(self, kind: str) -> Kind[Any]:
        spec = KINDS.get(kind)
        if spec is None:
            raise CallError(ErrorCode.UNAVAILABLE, f"the {kind} kind is not available in this Helm")
        running = self.running.made(spec.name)
        return running if running is not None else await self.kind(spec)

    # -- the pipeline --------------------------------------------------------------------
    async def _admitted(
        self,
        ctx: CallContext,
        connection_id: str,
        operation: str,
        args: Mapping[str, Any],
        route: _Route,
    ) -> dict[str, Any]:
        """``_admit`` under the activity hook (``broker.activity``): every call is recorded
        when it ends; while the user has stopped its extension or connection it is refused,
        and when they stop it during the call it is cancelled and answered with that refusal."""
        watch = self.activity.begin(ctx, connection_id, operation)
        result: dict[str, Any] | None = None
        cancelled: asyncio.CancelledError | None = None
        try:
            if watch.refusal is not None:
                route = replace(route, refusal=watch.refusal)
            result = await self._admit(ctx, connection_id, operation, args, route, watch)
        except asyncio.CancelledError as exc:
            cancelled = exc
        except Exception:  # a bug, or the home failing under a step (an audit record): never raised
            log.exception("a call of %s failed inside Helm", ctx.extension)
            err = CallError(ErrorCode.UNAVAILABLE, "Helm could not complete this call (internal error)")
            write = self._is_write_hint(ctx, connection_id, operation)  # it may have been sent
            result = envelope.failure(self._kind_hint(ctx, connection_id), err, write=write)
        stopped = watch.cancelled_by_stop()  # also when a library swallowed the cancellation
        if stopped is not None:
            write = self._is_write_hint(ctx, connection_id, operation)
            result = envelope.failure(self._kind_hint(ctx, connection_id), stopped, write=write)
        self.activity.end(watch, result)
        if result is None:
            raise cancelled or asyncio.CancelledError()
        return result

    async def _admit(
        self,
        ctx: CallContext,
        connection_id: str,
        operation: str,
        args: Mapping[str, Any],
        route: _Route,
        watch: Watch,
    ) -> dict[str, Any]:
        """Admission, then the call (or the route's refusal, when the call was refused before it
        was read); every CallError becomes the kind's failure envelope, and its detail (for the
        user only) goes to the call's Activity record."""
        key = instance_key(ctx)
        admitted = self.admission.admit(key)
        if not admitted.admitted:
            err = CallError(ErrorCode.RATE_LIMITED, admitted.reason, retry_after=admitted.retry_after)
            return envelope.failure(self._kind_hint(ctx, connection_id), err)
        resolved: Resolved | None = None
        try:
            if route.refusal is not None:
                raise route.refusal
            handler = route.handler or self._builtin(ctx, connection_id, operation)
            if handler is not None:
                return await self._run_builtin(ctx, handler, args)
            resolved = self._resolve(ctx, connection_id, operation, args)
            if route.check is not None:
                await route.check()
            adapter = await self._running(resolved.kind)
            if not resolved.call.approval and self._pins(adapter):
                resolved = await self._pinned(resolved)
            if not resolved.call.write:
                return await self._execute(adapter, resolved.call)
            if route.confirm is not None:
                return await self.writes.request(self._target(resolved), route.confirm)
            return await self.writes.send(self._target(resolved), route.confirmation)
        except CallError as err:
            watch.detail = err.detail
            if resolved is None:
                kind = self._kind_hint(ctx, connection_id)
                write = self._is_write_hint(ctx, connection_id, operation)
            else:
                kind, write = resolved.kind, resolved.call.write
            if isinstance(err, PolicyRefusal):
                enforce.audit_refusal(self.audit, ctx, connection_id, operation, kind, err)
            return envelope.failure(kind, err, write=write)
        finally:
            self.admission.release(key)

    async def _run_builtin(
        self, ctx: CallContext, handler: Handler, args: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A built-in call: the organisation's policy on its extension or app, the arguments'
        bounds, then its handler."""
        forbidden = enforce.builtin_refusal(self.home, ctx, self._manifests.load)
        if forbidden is not None:
            raise forbidden.error()
        check_arguments(args, False)  # a JSON object within the call's size cap
        return envelope.success("", await handler(args))

    def _builtin(self, ctx: CallContext, connection_id: str, operation: str) -> Handler | None:
        builtin = self.builtins.get(connection_id) if connection_id.startswith("$") else None
        return None if builtin is None else builtin.handler(ctx, operation)

    def _resolve(
        self, ctx: CallContext, connection_id: str, operation: str, args: Mapping[str, Any]
    ) -> Resolved:
        return self._resolutions.resolve(ctx, connection_id, operation, args)

    async def _pinned(self, r: Resolved) -> Resolved:
        """Pin what the kind pins, at the connection's first contact, if approval could not."""
        if r.call.approval:
            return r
        adapter = await self._running(r.kind)
        if not self._pins(adapter):
            return r
        return await pin_first_contact(self.home, self.audit, r, adapter)

    def policy_stops(self) -> PolicyChange | None:
        """Stop what the organisation's policy forbids now: every running call of an extension
        it forbids is cancelled (and answered with the policy's refusal; its new calls are
        refused anyway, at every call). None when the policy did not change since the last
        look; else the policy now and what it stopped, for a notice. The window looks every
        few seconds; it costs a stat of each policy file (``broker.policy.enforce``)."""
        return self._policy.stops()

    def _target(self, r: Resolved) -> WriteTarget:
        async def prepare() -> Prepared:
            adapter = await self._running(r.kind)
            details = await adapter.describe(r.call)
            return Prepared(details, lambda: self._send(adapter, r))

        return WriteTarget(
            _named(r.ctx.who, r.manifest.name), r.call.connection_id, r.call.operation, r.kind, prepare
        )

    async def _send(self, adapter: Kind[Any], r: Resolved) -> dict[str, Any]:
        """A confirmed write, sent only while the organisation's policy still allows it."""
        enforce.before_sending(self.home, r)
        return await self._execute(adapter, r.call)

    async def _execute(self, adapter: Kind[Any], call: Call[Connection]) -> dict[str, Any]:
        try:
            return await adapter.execute(call)
        except CallError:
            raise
        except Exception as exc:
            log.exception("the %s kind failed unexpectedly", call.connection.kind)
            raise CallError(
                ErrorCode.UNAVAILABLE, "Helm could not complete this call (internal error)"
            ) from exc

    # -- helpers -------------------------------------------------------------------------
    def _user_sinks(self) -> tuple[SinkConfig, ...]:
        return teams.audit_sinks(self.home.settings())

    def _settings_version(self) -> object:
        try:
            return self.home.settings()
        except SettingsError:
            return object()  # unreadable now: never the same as before

    def _connection_hint(self, ctx: CallContext, connection_id: str) -> Connection | None:
        try:
            manifest = self.manifest(ctx.workspace, ctx.extension)
        except (SettingsError, ManifestError):
            return None
        return manifest.connection(connection_id)

    def _kind_hint(self, ctx: CallContext, connection_id: str) -> str:
        """The kind whose envelope a refusal takes ("" when the connection is unknown: the
        plain envelope)."""
        conn = self._connection_hint(ctx, connection_id)
        return conn.kind if conn is not None else ""

    def _is_write_hint(self, ctx: CallContext, connection_id: str, operation: str) -> bool:
        conn = self._connection_hint(ctx, connection_id)
        return conn is not None and conn.operations.get(operation, False)


def _named(who: Requester, name: str) -> Requester:
    """``who`` with the name its manifest gives, for the dialog (an extension or app)."""
    if isinstance(who, ExtensionFrame | AppInstance) and not who.name:
        return replace(who, name=name)
    return who
