"""The one write pipeline: describe → mint → confirm → redeem → audit → send → audit.

Every write Helm makes on someone's behalf goes through ``WritePipeline``: an extension's
declared write (``Broker.request``/``call``), an MCP App's, a coding agent's file write
(``broker.agents.files``), the DB explorer's statements and its write toggle, and anything else
that must wait for the user's Confirm. A caller describes *what* to write as a ``WriteTarget`` —
who asks (a ``broker.context.Requester``), through what (connection, operation, kind) and a
``prepare`` coroutine that validates the request and returns a ``Prepared``: the
``WriteDetails`` the dialog shows (with the ``binding``, the exact request) and ``send``, which
performs exactly that request. The pipeline does the rest::

    envelope_or_error = await pipeline.request(target, confirm)   # the whole flow, one call
    summary = await pipeline.describe(target)                     # or in two steps: the dialog…
    result = await pipeline.send(target, summary.token)           # …and its Confirm button

Guarantees:

* Nothing is sent without a token minted for the same requester (workspace and id),
  connection, operation and digest of the binding, redeemed once, within its lifetime (five
  minutes; a target may set its own, as an agent's question does).
* ``request`` prepares (the kind's describe and parse) once. Only when Helm's settings changed
  while the user was deciding (a profile edited under an open dialog) is the write prepared
  again, and the token is then redeemed against the new binding: a request the user did not
  see is refused with ``confirmation_required``, never sent.
* Every outcome is in the audit log, naming who asked: confirmed, declined, expired, refused,
  and ``cancelled`` when the call was cancelled (or its requester ended) while the dialog was
  open (nothing sent). A confirmed write is recorded *before* it is sent (outcome ``sending``)
  and again with its outcome (``cancelled`` when the call was cancelled while it was being
  sent). When the decision cannot be recorded (a full disk, a read-only home) nothing is sent
  and the call ends with ``unavailable``. Each record names the fields the dialog showed (their
  labels, never their values) and, for a file, which file.
* When the organisation's decision point asks about writes (``broker.decision_point``), it is
  asked once the write is prepared, before the user is: anything but ALLOW refuses the write
  (recorded ``refused``, nothing sent, the user never asked); an ALLOW leaves the user's
  confirmation in place. Its verdict and ids are in the write's records.

Errors are ``CallError``s; the caller turns them into its envelope (``broker.envelope``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from broker.audit import AuditLog, AuditRecord
from broker.context import Requester
from broker.decision_point import PointAsker, PointRequest, PointVerdict, write_classes
from broker.errors import CallError, ErrorCode
from broker.jsonutil import digest
from broker.kinds.base import WriteDetails
from broker.summary import Confirmer, Decision, WriteSummary
from broker.tokens import Binding, Redemption, TokenBook

log = logging.getLogger("helm.writes")

SENDING = "sending"
"""The outcome of a confirmed write's first record, written before it is sent."""


@dataclass(frozen=True)
class Prepared:
    """A validated write: what the dialog shows, and the coroutine that sends exactly that."""

    details: WriteDetails
    send: Callable[[], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class WriteTarget:
    """Who wants to write what; ``prepare`` raises ``CallError`` when it would be refused.

    ``lifetime``: how long its token stays valid, in seconds (None: the token book's five
    minutes); an agent's write lives as long as the agent's question may stay open.
    """

    requester: Requester
    connection: str
    operation: str
    kind: str
    prepare: Callable[[], Awaitable[Prepared]]
    lifetime: float | None = None

    def binding(self, details: WriteDetails) -> Binding:
        request = digest(details.binding)
        who = self.requester
        return Binding(who.workspace, who.id, self.connection, self.operation, request)


UNANSWERED = {
    Decision.DECLINED: (ErrorCode.DECLINED, "the user declined this write; nothing was sent"),
    Decision.EXPIRED: (
        ErrorCode.CONFIRMATION_REQUIRED,
        "the confirmation expired before the user answered; nothing was sent",
    ),
    Decision.WITHDRAWN: (ErrorCode.DECLINED, "the question was withdrawn unanswered; nothing was sent"),
}
"""The error of a write the user did not confirm, by how the question ended."""

UNRECORDED = "Helm cannot write its audit log (a full disk or a read-only home?); nothing was sent"

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

    def __init__(
        self,
        tokens: TokenBook,
        audit: AuditLog,
        settings_version: Callable[[], object],
        point: PointAsker | None = None,
    ) -> None:
        """``point``: the organisation's decision point, asked about every write it wants."""
        self.tokens = tokens
        self.audit = audit
        self.point = point
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
        prepared = await target.prepare()
        verdict = await self._asked(target, prepared.details, token)
        return await self._redeemed(target, prepared, token, verdict)

    async def request(self, target: WriteTarget, confirm: Confirmer) -> dict[str, Any]:
        """The whole flow: prepare once, ask ``confirm``, send only when the user confirmed."""
        version = self._settings_version()
        prepared = await target.prepare()
        summary = self._summary(target, prepared)
        verdict = await self._asked(target, prepared.details, summary.token)
        try:
            decision = await confirm(summary)
        except asyncio.CancelledError:  # the frame closed, or the user stopped the extension
            self.tokens.discard(summary.token)
            self._audit_after(target, prepared.details, "cancelled", "nothing sent", verdict)
            raise
        if decision is not Decision.CONFIRMED:
            self.tokens.discard(summary.token)
            self._audit_after(target, prepared.details, decision.value, "nothing sent", verdict)
            code, message = UNANSWERED[decision]
            raise CallError(code, message)
        if self._settings_version() is not version:
            try:
                prepared = await target.prepare()  # what would be sent now, checked against the token
            except CallError:
                self.tokens.discard(summary.token)
                raise
        return await self._redeemed(target, prepared, summary.token, verdict)

    async def _asked(
        self, target: WriteTarget, details: WriteDetails, token: str | None
    ) -> PointVerdict | None:
        """The decision point's verdict on this write (None: not asked); a refusal is recorded
        and raised, and its token withdrawn."""
        if self.point is None:
            return None
        verdict = await self.point.ask(point_request(target, details), write=True)
        if verdict is None or verdict.allowed:
            return verdict
        if token is not None:
            self.tokens.discard(token)
        self._audit_after(target, details, "refused", "nothing sent", verdict)
        raise CallError(ErrorCode.REFUSED, f"{verdict.refusal()}; nothing was sent")

    def _summary(self, target: WriteTarget, prepared: Prepared) -> WriteSummary:
        details = prepared.details
        binding = target.binding(details)
        token, ttl = self.tokens.mint(binding, target.lifetime)
        return WriteSummary(
            token=token,
            expires_in=ttl,
            kind=target.kind,
            title=details.title,
            requester=target.requester,
            connection=target.connection,
            operation=target.operation,
            fields=details.fields,
            request=details.request,
            request_digest=binding.request_digest,
            diff=details.diff,
        )

    async def _redeemed(
        self, target: WriteTarget, prepared: Prepared, token: str, point: PointVerdict | None
    ) -> dict[str, Any]:
        details = prepared.details
        verdict = self.tokens.redeem(token, target.binding(details))
        if verdict is not Redemption.VALID:
            decision = "expired" if verdict is Redemption.EXPIRED else "refused"
            self._audit_after(target, details, decision, "nothing sent", point)
            raise CallError(ErrorCode.CONFIRMATION_REQUIRED, REDEMPTION_MESSAGES[verdict])
        try:
            self._audit(target, details, "confirmed", SENDING, point)  # the decision, before anything is sent
        except OSError as exc:
            log.error("the audit log cannot be written (%s); a confirmed write was not sent", exc)
            raise CallError(ErrorCode.UNAVAILABLE, UNRECORDED) from None
        try:
            result = await prepared.send()
        except CallError as err:
            self._audit_after(target, details, "confirmed", err.code.value, point)
            raise
        except asyncio.CancelledError:  # cancelled while it was being sent: it may have arrived
            self._audit_after(target, details, "confirmed", "cancelled", point)
            raise
        error = result.get("error")
        outcome = "ok" if result.get("ok") else str(error.get("code") if isinstance(error, dict) else error)
        self._audit_after(target, details, "confirmed", outcome, point)
        return result

    def _audit_after(
        self,
        target: WriteTarget,
        details: WriteDetails,
        decision: str,
        outcome: str,
        point: PointVerdict | None,
    ) -> None:
        """Record an outcome; when the log cannot be written the caller still gets its answer
        (what was decided is already done, or nothing was sent)."""
        try:
            self._audit(target, details, decision, outcome, point)
        except OSError as exc:
            log.error("the audit log cannot be written (%s): %s %s not recorded", exc, decision, outcome)

    def _audit(
        self,
        target: WriteTarget,
        details: WriteDetails,
        decision: str,
        outcome: str,
        point: PointVerdict | None,
    ) -> None:
        who = target.requester
        self.audit.record(
            AuditRecord(
                workspace=who.workspace,
                extension=who.id,
                connection=target.connection,
                kind=target.kind,
                operation=target.operation,
                decision=decision,
                outcome=outcome,
                title=details.title,
                request_digest=digest(details.binding),
                fields=tuple(label for label, _value in details.fields),
                requester=who.role,
                instance=who.instance,
                file=details.file,
                reason="" if point is None or point.allowed else point.refusal(),
                **({} if point is None else point.audit()),
            )
        )


MAX_POINT_ARGS_BYTES = 64 * 1024
"""A write's request larger than this reaches the decision point as its digest alone."""


def point_request(target: WriteTarget, details: WriteDetails) -> PointRequest:
    """What the decision point is asked about a write: ``tool.helm.<kind>.<connection>``, the
    operation, the exact request (as the dialog's binding holds it, credentials never in it)."""
    who = target.requester
    request_digest = digest(details.binding)
    args: dict[str, Any] = dict(details.binding)
    if len(json.dumps(args, default=str)) > MAX_POINT_ARGS_BYTES:
        args = {"too_large": True}
    risk, effect = write_classes(target.kind)
    return PointRequest(
        resource=f"tool.helm.{target.kind}.{target.connection}",
        tool=target.operation,
        args=args,
        session_id=who.instance,
        risk_class=risk,
        effect_class=effect,
        context={
            "workspace": who.workspace,
            "requester": {"role": who.role, "id": who.id, "instance": who.instance},
            "connection": target.connection,
            "kind": target.kind,
            "request_digest": request_digest,
            "write": True,
        },
    )
