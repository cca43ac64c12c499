"""The bridge object one extension frame's web channel exposes to Helm's isolated world.

The frame's identity (``CallContext``) is fixed when the bridge is made, from the frame the
host created, and never read from the page. A slot cannot await, so each call starts a task
the bridge owns; its JSON result comes back through the ``done`` signal with the request id.

The calls a page makes in one go arrive as one batch (``callMany``); the answers Helm has at
once for a batch go back as one message too (``doneMany``), the others one by one as they come.
A channel message costs more than the work of a call that is answered at once, so 200
concurrent calls cost a few messages each way instead of 200.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Protocol

from broker import envelope
from broker.broker import MAX_CALL_BYTES
from broker.context import CallContext
from broker.errors import CallError, ErrorCode
from broker.summary import Confirmer
from ui.aio import OwnedTasks
from ui.qt import QObject, Signal, Slot

log = logging.getLogger(__name__)

MAX_NAME_CHARS = 256
"""The longest connection id or operation name Helm reads (manifests declare shorter ones)."""

MAX_BATCH_CALLS = 64
"""The most calls one ``callMany`` carries; Helm reads no more of a longer batch."""


class CallHandler(Protocol):
    """What the bridge calls; ``broker.Broker`` is one."""

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str: ...


def _failure(code: ErrorCode, message: str) -> str:
    """An envelope for a call the bridge ends itself, built where every envelope is built."""
    return json.dumps(envelope.failure("", CallError(code, message)), separators=(",", ":"))


_FAILED = _failure(ErrorCode.UNAVAILABLE, "Helm could not complete this call")


class Bridge(QObject):
    """``call``, ``callMany`` and ``ready`` are the only slots the isolated world uses."""

    done = Signal(str, str)
    """(request id, result envelope as JSON text)"""

    doneMany = Signal(list)
    """[[request id, result envelope as JSON text], ...]: a batch's answers that were ready at once."""

    pageReady = Signal()
    """The page's ``window.helm`` is connected."""

    def __init__(
        self, handler: CallHandler, ctx: CallContext, confirm: Confirmer, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._handler = handler
        self._ctx = ctx
        self._confirm = confirm
        self._tasks = OwnedTasks(self)
        self._gathered: list[list[str]] | None = None  # a batch's answers, while it is started
        self._closed = False

    @property
    def ctx(self) -> CallContext:
        return self._ctx

    @property
    def closed(self) -> bool:
        return self._closed

    @Slot(str, str, str, str)
    def call(self, request_id: str, connection_id: str, operation: str, args_json: str) -> None:
        self._start(request_id, connection_id, operation, args_json)

    @Slot(list)
    def callMany(self, calls: list[object]) -> None:
        """Start each call of a batch of [request id, connection, operation, arguments] (more
        than ``MAX_BATCH_CALLS`` are not read; an entry of another shape is skipped). The
        answers ready at once go back together in one ``doneMany``."""
        gathered: list[list[str]] = []
        self._gathered = gathered
        try:
            for call in calls[:MAX_BATCH_CALLS]:
                if not isinstance(call, list) or len(call) != 4:
                    continue
                request_id, connection_id, operation, args_json = call
                texts = (request_id, connection_id, operation, args_json)
                if all(isinstance(part, str) for part in texts):
                    self._start(str(request_id), str(connection_id), str(operation), str(args_json))
        finally:
            self._gathered = None
        if len(gathered) == 1:
            self.done.emit(*gathered[0])
        elif gathered:
            self.doneMany.emit(gathered)

    def _start(self, request_id: str, connection_id: str, operation: str, args_json: str) -> None:
        if self._closed or len(request_id) > MAX_NAME_CHARS:
            return
        # Helm's isolated world cuts every part one character past its limit, so nothing
        # longer arrives; cut here too, so the handler never holds more whatever the sender.
        # The handler answers an over-long call (and counts it against the rate limit).
        connection_id = connection_id[: MAX_NAME_CHARS + 1]
        operation = operation[: MAX_NAME_CHARS + 1]
        args_json = args_json[: MAX_CALL_BYTES + 1]
        # Started eagerly: the call runs inside this slot up to its first real wait, so a call
        # the broker answers at once (a refusal, the rate limit) costs no extra loop turn.
        self._tasks.start(self._run(request_id, connection_id, operation, args_json), eager=True)

    @Slot()
    def ready(self) -> None:
        if not self._closed:
            self.pageReady.emit()

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    async def _run(self, request_id: str, connection_id: str, operation: str, args_json: str) -> None:
        try:
            result = await self._handler.request_json(
                self._ctx, connection_id, operation, args_json, self._confirm
            )
        except asyncio.CancelledError:
            raise
        except Exception:  # the top of a task: the page must always get an answer
            log.exception(
                "call %s.%s of %s failed inside Helm", connection_id, operation, self._ctx.extension
            )
            result = _FAILED
        if self._gathered is not None:  # answered while its batch is being started
            self._gathered.append([request_id, result])
        else:
            self.done.emit(request_id, result)

    def close(self) -> None:
        """Take no more calls and cancel those still running: the page reaches Helm no more.

        The page's web channel stays, with this bridge on it, for as long as the page lives:
        the engine binds a document's first message to the page's channel without checking that
        there is one, so a page left without its channel while its renderer is about to send
        (a load or reload under way) crashes Helm's process."""
        self._closed = True
        self._tasks.cancel()

    async def aclose(self) -> None:
        """Close (the frame is closing) and wait for the calls that were running to end."""
        self.close()
        await self._tasks.wait()
