"""The one write pipeline: describe → mint → confirm → redeem → send → audit.

Every write Helm makes on someone's behalf goes through ``WritePipeline``: an extension's
declared write (``Broker.request``/``call``), the DB explorer's statements and its write toggle,
and anything else that must wait for the user's Confirm. A caller describes *what* to write as
a ``WriteTarget`` — who asks (workspace, extension), through what (connection, operation, kind)
and a ``prepare`` coroutine that validates the request and returns a ``Prepared``: the
``WriteDetails`` the dialog shows (with the ``binding``, the exact request) and ``send``, which
performs exactly that request. The pipeline does the rest::

    envelope_or_error = await pipeline.request(target, confirm)   # the whole flow, one call
    summary = await pipeline.describe(target)                     # or in two steps: the dialog…
    result = await pipeline.send(target, summary.token)           # …and its Confirm button

Guarantees:

* Nothing is sent without a token minted for the same workspace, extension, connection,
  operation and digest of the binding, redeemed once, within its five minutes.
* ``request`` prepares (the kind's describe and parse) once. Only when Helm's settings changed
  while the user was deciding (a profile edited under an open dialog) is the write prepared
  again, and the token is then redeemed against the new binding: a request the user did not
  see is refused with ``confirmation_required``, never sent.
* Every outcome is in the audit log: confirmed (with the outcome, ``cancelled`` when the call
  was cancelled while it was being sent), declined, expired, refused, and ``cancelled`` when the
  call was cancelled while the dialog was open (nothing sent). Each record names the fields the
  dialog showed (their labels, never their values).

Errors are ``CallError``s; the caller turns them into its envelope (``broker.envelope``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from broker.audit import AuditLog, AuditRecord
from broker.errors import CallError, ErrorCode
from broker.jsonutil import digest
from broker.kinds.base import WriteDetails
from broker.summary import Confirmer, Decision, WriteSummary
from broker.tokens import Binding, Redemption, TokenBook


@dataclass(frozen=True)
class Prepared:
    """A validated write: what the dialog shows, and the coroutine that sends exactly that."""

    details: WriteDetails
    send: Callable[[], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class WriteTarget:
    """Who wants to write what; ``prepare`` raises ``CallError`` when it would be refused."""

    workspace: str
    extension: str
    extension_name: str
    connection: str
    operation: str
    kind: str
    prepare: Callable[[], Awaitable[Prepared]]

    def binding(self, details: WriteDetails) -> Binding:
        request = digest(details.binding)
        return Binding(self.workspace, self.extension, self.connection, self.operation, request)


REDEMPTION_MESSAGES = {
    Redemption.UNKNOWN: "the confirmation is unknown or was already used; nothing was sent",
    Redemption.EXPIRED: "the confirmation expired; nothing was sent",
    Redemption.MISMATCH: "the confirmation was given for a different request; nothing was sent",
}


class WritePipeline:
    """Tokens, the user's answer and the audit log around every write.

    ``settings_version`` returns an object that stays the same (``is``) while Helm's settings
    are unchanged; the pipeline prepares a write again only when it changed.
    """

    def __init__(self, tokens: TokenBook, audit: AuditLog, settings_version: Callable[[], object]) -> None:
        self.tokens = tokens
        self.audit = audit
        self._settings_version = settings_version

    async def describe(self, target: WriteTarget) -> WriteSummary:
        """Prepare ``target`` and mint its one-time token: what the dialog shows."""
        return self._summary(target, await target.prepare())

    async def send(self, target: WriteTarget, token: str | None) -> dict[str, Any]:
        """Send a write with the token its dialog's Confirm button passed (the two-step flow)."""
        if token is None:
            raise CallError(
                ErrorCode.CONFIRMATION_REQUIRED, "a write needs the user's confirmation; nothing was sent"
            )
        return await self._redeemed(target, await target.prepare(), token)

    async def request(self, target: WriteTarget, confirm: Confirmer) -> dict[str, Any]:
        """The whole flow: prepare once, ask ``confirm``, send only when the user confirmed."""
        version = self._settings_version()
        prepared = await target.prepare()
        summary = self._summary(target, prepared)
        try:
            decision = await confirm(summary)
        except asyncio.CancelledError:  # the frame closed, or the user stopped the extension
            self.tokens.discard(summary.token)
            self._audit(target, prepared.details, "cancelled", "nothing sent")
            raise
        if decision is not Decision.CONFIRMED:
            self.tokens.discard(summary.token)
            self._audit(target, prepared.details, decision.value, "nothing sent")
            if decision is Decision.DECLINED:
                raise CallError(ErrorCode.DECLINED, "the user declined this write; nothing was sent")
            raise CallError(
                ErrorCode.CONFIRMATION_REQUIRED,
                "the confirmation expired before the user answered; nothing was sent",
            )
        if self._settings_version() is not version:
            try:
                prepared = await target.prepare()  # what would be sent now, checked against the token
            except CallError:
                self.tokens.discard(summary.token)
                raise
        return await self._redeemed(target, prepared, summary.token)

    def _summary(self, target: WriteTarget, prepared: Prepared) -> WriteSummary:
        details = prepared.details
        binding = target.binding(details)
        token, ttl = self.tokens.mint(binding)
        return WriteSummary(
            token=token,
            expires_in=ttl,
            kind=target.kind,
            title=details.title,
            workspace=target.workspace,
            extension=target.extension,
            extension_name=target.extension_name,
            connection=target.connection,
            operation=target.operation,
            fields=details.fields,
            request=details.request,
            request_digest=binding.request_digest,
            diff=details.diff,
        )

    async def _redeemed(self, target: WriteTarget, prepared: Prepared, token: str) -> dict[str, Any]:
        verdict = self.tokens.redeem(token, target.binding(prepared.details))
        if verdict is not Redemption.VALID:
            decision = "expired" if verdict is Redemption.EXPIRED else "refused"
            self._audit(target, prepared.details, decision, "nothing sent")
            raise CallError(ErrorCode.CONFIRMATION_REQUIRED, REDEMPTION_MESSAGES[verdict])
        try:
            result = await prepared.send()
        except CallError as err:
            self._audit(target, prepared.details, "confirmed", err.code.value)
            raise
        except asyncio.CancelledError:  # cancelled while it was being sent: it may have arrived
            self._audit(target, prepared.details, "confirmed", "cancelled")
            raise
        error = result.get("error")
        outcome = "ok" if result.get("ok") else str(error.get("code") if isinstance(error, dict) else error)
        self._audit(target, prepared.details, "confirmed", outcome)
        return result

    def _audit(self, target: WriteTarget, details: WriteDetails, decision: str, outcome: str) -> None:
        self.audit.record(
            AuditRecord(
                workspace=target.workspace,
                extension=target.extension,
                connection=target.connection,
                kind=target.kind,
                operation=target.operation,
                decision=decision,
                outcome=outcome,
                title=details.title,
                request_digest=digest(details.binding),
                fields=tuple(label for label, _value in details.fields),
            )
        )
