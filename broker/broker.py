"""The broker: every call an extension makes goes through ``Broker``.

The flow of one call: admission (rate limit, in-flight cap) → the extension installed and
enabled in the workspace → its manifest, approved with the same digest → the connection and
operation on the allowlist → for a write, a redeemed token bound to the exact request → the
kind's adapter → the kind's envelope. ``call`` never raises for anything an extension or a
server can cause; the envelope carries a contract error code instead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from broker import envelope
from broker.audit import AuditLog, AuditRecord
from broker.context import CallContext
from broker.credentials import CredentialStore, open_store
from broker.errors import CallError, ErrorCode, ManifestError, SettingsError
from broker.jsonutil import DuplicateKeyError, digest, loads_strict
from broker.kinds import KINDS
from broker.kinds.base import Call, Kind, KindEnv
from broker.manifest import Manifest
from broker.manifest import load as load_manifest
from broker.ratelimit import CallAdmission
from broker.settings import Home
from broker.summary import Confirmer, Decision, WriteSummary
from broker.tokens import Binding, Redemption, TokenBook

log = logging.getLogger("helm.broker")

MAX_CALL_BYTES = 256 * 1024
"""The largest call message (the canonical JSON of the arguments) Helm accepts."""


@dataclass(frozen=True)
class _Resolved:
    ctx: CallContext
    manifest: Manifest
    call: Call
    kind: str


class Broker:
    """Opened on a Helm home; use as ``async with Broker(home) as broker``."""

    def __init__(self, home: Path, *, credentials: CredentialStore | None = None) -> None:
        self.home = Home(home)
        self.credentials = credentials if credentials is not None else open_store(home)
        self.audit = AuditLog(home / "audit.jsonl")
        self.tokens = TokenBook()
        self.admission = CallAdmission()
        self._adapters: dict[str, Kind] = {}
        self._manifests: dict[Path, tuple[tuple[int, int], Manifest]] = {}

    async def __aenter__(self) -> Self:
        self.home.ensure()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        adapters, self._adapters = self._adapters, {}
        for name, adapter in adapters.items():
            try:
                await adapter.aclose()
            except Exception:
                log.exception("closing the %s kind failed", name)

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
        return await self._admitted(ctx, connection_id, operation, args, confirmation=confirmation)

    async def describe_write(
        self, ctx: CallContext, connection_id: str, operation: str, args: Mapping[str, Any]
    ) -> WriteSummary:
        """Describe a write for the confirmation dialog and mint its one-time token.

        Raises ``CallError`` when the call would be refused anyway (nothing to confirm).
        """
        resolved = self._resolve(ctx, connection_id, operation, args)
        if not resolved.call.write:
            raise CallError(ErrorCode.REFUSED, f"{operation!r} is not a write operation")
        return await self._describe(resolved)

    async def request(
        self,
        ctx: CallContext,
        connection_id: str,
        operation: str,
        args: Mapping[str, Any],
        confirm: Confirmer,
    ) -> dict[str, Any]:
        """The whole flow of one call from an extension, writes included.

        A read goes straight to ``call``. A write is described, ``confirm`` asks the user, and
        only a confirmation sends it with the token; a decline returns ``declined``.
        """
        return await self._admitted(ctx, connection_id, operation, args, confirm=confirm)

    async def _admitted(
        self,
        ctx: CallContext,
        connection_id: str,
        operation: str,
        args: Mapping[str, Any],
        *,
        confirmation: str | None = None,
        confirm: Confirmer | None = None,
        refusal: CallError | None = None,
    ) -> dict[str, Any]:
        """Admission, then the call (or ``refusal``, when the call was refused before it was
        read); every CallError becomes the kind's failure envelope."""
        admitted = self.admission.admit(ctx.instance)
        if not admitted.admitted:
            err = CallError(ErrorCode.RATE_LIMITED, admitted.reason, retry_after=admitted.retry_after)
            return envelope.failure(self._kind_hint(ctx, connection_id), err)
        resolved: _Resolved | None = None
        try:
            if refusal is not None:
                raise refusal
            resolved = self._resolve(ctx, connection_id, operation, args)
            if confirm is not None and resolved.call.write:
                return await self._confirmed(resolved, confirm)
            return await self._run(resolved, confirmation)
        except CallError as err:
            if resolved is None:
                kind = self._kind_hint(ctx, connection_id)
                write = self._is_write_hint(ctx, connection_id, operation)
            else:
                kind, write = resolved.kind, resolved.call.write
            return envelope.failure(kind, err, write=write)
        finally:
            self.admission.release(ctx.instance)

    async def _confirmed(self, resolved: _Resolved, confirm: Confirmer) -> dict[str, Any]:
        """A write: describe it, ask the user, and send it only when confirmed."""
        summary = await self._describe(resolved)
        decision = await confirm(summary)
        if decision is Decision.CONFIRMED:
            return await self._run(resolved, summary.token)
        self.tokens.discard(summary.token)
        self._audit(resolved, summary.request_digest, decision.value, summary.title, outcome="nothing sent")
        if decision is Decision.DECLINED:
            raise CallError(ErrorCode.DECLINED, "the user declined this write; nothing was sent")
        raise CallError(
            ErrorCode.CONFIRMATION_REQUIRED,
            "the confirmation expired before the user answered; nothing was sent",
        )

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        """``request`` with JSON text in and out, for the web bridge."""
        if len(args_json) > MAX_CALL_BYTES:
            # Refused unread (the bridge passes at most one character past the limit), and
            # counted against the rate limit like any other call.
            too_large = CallError(ErrorCode.TOO_LARGE, "the call message is larger than 256 KiB")
            result = await self._admitted(ctx, connection_id, operation, {}, refusal=too_large)
        else:
            try:
                args = loads_strict(args_json) if args_json else {}
            except (DuplicateKeyError, ValueError, RecursionError):
                err = CallError(ErrorCode.REFUSED, "the arguments are not valid JSON (or repeat a key)")
                result = envelope.failure(self._kind_hint(ctx, connection_id), err)
            else:
                result = await self.request(ctx, connection_id, operation, args, confirm)
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))

    def is_write(self, ctx: CallContext, connection_id: str, operation: str) -> bool:
        return self._is_write_hint(ctx, connection_id, operation)

    def manifest(self, workspace: str, extension: str) -> Manifest:
        """The current manifest of an installed extension (raises ManifestError/SettingsError)."""
        ws = self.home.settings().workspace(workspace)
        ext = ws.extensions.get(extension)
        if ext is None:
            raise SettingsError(f"extension {extension!r} is not installed in workspace {workspace!r}")
        return self._load_manifest(ext.path)

    def adapter(self, kind: str) -> Kind:
        """The running adapter of a kind, created on first use."""
        adapter = self._adapters.get(kind)
        if adapter is None:
            spec = KINDS.get(kind)
            if spec is None:
                raise CallError(ErrorCode.UNAVAILABLE, f"the {kind} kind is not available in this Helm")
            env = KindEnv(self.home, self.credentials, self.audit)
            adapter = self._adapters[kind] = spec.load()(env)
        return adapter

    # -- the pipeline --------------------------------------------------------------------
    def _resolve(
        self, ctx: CallContext, connection_id: str, operation: str, args: Mapping[str, Any]
    ) -> _Resolved:
        try:
            settings = self.home.settings()
            workspace = settings.workspace(ctx.workspace)
        except SettingsError as exc:
            raise CallError(
                ErrorCode.NOT_CONFIGURED, f"workspace {ctx.workspace!r} is not configured"
            ) from exc
        ext = workspace.extensions.get(ctx.extension)
        if ext is None or not ext.enabled:
            raise CallError(ErrorCode.REFUSED, "this extension is not enabled in this workspace")
        try:
            manifest = self._load_manifest(ext.path)
        except ManifestError as exc:
            raise CallError(
                ErrorCode.REFUSED, "the extension's manifest is invalid; run helm ext lint"
            ) from exc
        if ext.approval is None or ext.approval.digest != manifest.digest():
            raise CallError(
                ErrorCode.REFUSED,
                "the extension's connections changed since the user approved them; Helm needs a new approval",
            )
        conn = manifest.connection(connection_id)
        if conn is None:
            raise CallError(ErrorCode.REFUSED, f"connection {connection_id!r} is not declared")
        ops = manifest.operations(conn)
        if operation not in ops:
            raise CallError(
                ErrorCode.REFUSED, f"operation {operation!r} is not declared for {connection_id!r}"
            )
        if not isinstance(args, Mapping):
            raise CallError(ErrorCode.REFUSED, "the arguments must be a JSON object")
        try:
            size = len(json.dumps(args, ensure_ascii=False, allow_nan=False).encode("utf-8"))
        except (TypeError, ValueError) as exc:
            raise CallError(ErrorCode.REFUSED, "the arguments must be plain JSON values") from exc
        if size > MAX_CALL_BYTES:
            raise CallError(ErrorCode.TOO_LARGE, "the call message is larger than 256 KiB")
        write = ops[operation]
        if write and not manifest.may_write:
            raise CallError(ErrorCode.REFUSED, "the manifest does not declare permissions.write")
        pins = ext.approval.pins.get(connection_id, {})
        call = Call(ctx, workspace, conn, operation, dict(args), write, pins)
        return _Resolved(ctx, manifest, call, str(conn["kind"]))

    async def _describe(self, r: _Resolved) -> WriteSummary:
        details = await self.adapter(r.kind).describe(r.call)
        request_digest = digest(details.binding)
        token, ttl = self.tokens.mint(self._binding(r, request_digest))
        return WriteSummary(
            token=token,
            expires_in=ttl,
            kind=r.kind,
            title=details.title,
            workspace=r.ctx.workspace,
            extension=r.manifest.id,
            extension_name=r.manifest.name,
            connection=r.call.connection_id,
            operation=r.call.operation,
            fields=details.fields,
            request=details.request,
            request_digest=request_digest,
            diff=details.diff,
        )

    async def _run(self, r: _Resolved, confirmation: str | None) -> dict[str, Any]:
        if not r.call.write:
            return await self._execute(self.adapter(r.kind), r.call)
        if confirmation is None:
            raise CallError(
                ErrorCode.CONFIRMATION_REQUIRED, "a write needs the user's confirmation; nothing was sent"
            )
        adapter = self.adapter(r.kind)
        details = await adapter.describe(r.call)
        request_digest = digest(details.binding)
        verdict = self.tokens.redeem(confirmation, self._binding(r, request_digest))
        if verdict is not Redemption.VALID:
            decision = "expired" if verdict is Redemption.EXPIRED else "refused"
            self._audit(r, request_digest, decision, details.title, outcome="nothing sent")
            raise CallError(ErrorCode.CONFIRMATION_REQUIRED, _REDEMPTION_MESSAGES[verdict])
        try:
            result = await self._execute(adapter, r.call)
        except CallError as err:
            self._audit(r, request_digest, "confirmed", details.title, outcome=err.code.value)
            raise
        self._audit(
            r,
            request_digest,
            "confirmed",
            details.title,
            outcome="ok" if result.get("ok") else str((result.get("error") or {}).get("code")),
        )
        return result

    async def _execute(self, adapter: Kind, call: Call) -> dict[str, Any]:
        try:
            return await adapter.execute(call)
        except CallError:
            raise
        except Exception as exc:
            log.exception("the %s kind failed unexpectedly", call.connection.get("kind"))
            raise CallError(
                ErrorCode.UNAVAILABLE, "Helm could not complete this call (internal error)"
            ) from exc

    # -- helpers -------------------------------------------------------------------------
    def _binding(self, r: _Resolved, request_digest: str) -> Binding:
        return Binding(
            r.ctx.workspace, r.ctx.extension, r.call.connection_id, r.call.operation, request_digest
        )

    def _audit(self, r: _Resolved, request_digest: str, decision: str, title: str, *, outcome: str) -> None:
        self.audit.record(
            AuditRecord(
                workspace=r.ctx.workspace,
                extension=r.ctx.extension,
                connection=r.call.connection_id,
                kind=r.kind,
                operation=r.call.operation,
                decision=decision,
                outcome=outcome,
                title=title,
                request_digest=request_digest,
            )
        )

    def _load_manifest(self, folder: Path) -> Manifest:
        file = folder / "manifest.json"
        try:
            st = file.stat()
        except OSError:
            return load_manifest(folder)  # raises ManifestError with the reason
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._manifests.get(folder)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        manifest = load_manifest(folder)
        self._manifests[folder] = (stamp, manifest)
        return manifest

    def _connection_hint(self, ctx: CallContext, connection_id: str) -> Mapping[str, Any] | None:
        try:
            manifest = self.manifest(ctx.workspace, ctx.extension)
        except (SettingsError, ManifestError):
            return None
        return manifest.connection(connection_id)

    def _kind_hint(self, ctx: CallContext, connection_id: str) -> str:
        conn = self._connection_hint(ctx, connection_id)
        return str(conn["kind"]) if conn is not None else "files"

    def _is_write_hint(self, ctx: CallContext, connection_id: str, operation: str) -> bool:
        conn = self._connection_hint(ctx, connection_id)
        if conn is None:
            return False
        return bool(KINDS[conn["kind"]].rules.operations(conn).get(operation, False))


_REDEMPTION_MESSAGES = {
    Redemption.UNKNOWN: "the confirmation is unknown or was already used; nothing was sent",
    Redemption.EXPIRED: "the confirmation expired; nothing was sent",
    Redemption.MISMATCH: "the confirmation was given for a different request; nothing was sent",
}
