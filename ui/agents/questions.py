"""The desktop's answers to an agent session's questions: Helm's own dialogs, one at a time.

``AgentQuestions`` is both the session's ``PermissionAsker`` (the permission dialog) and its
write ``Confirmer``: a ``DialogConfirmer``, which shows every write Helm asks about, whoever
asks (the token's deadline is the session's question timeout). A session asks one
question at a time: a second waits until the first is answered. The session bounds each
question (``Limits.question_timeout``) and cancels it when the turn is cancelled; the
dialog closes then, and an unanswered question is a refusal. No ``exec()``: each dialog is
shown window-modally and its answer awaited as a future.
"""

from __future__ import annotations

import asyncio

from broker.agents import PermissionQuestion
from broker.summary import Decision, WriteSummary
from ui.dialogs.agent_permission import PermissionDialog
from ui.dialogs.base import GUARD_MS, QuestionDialog, answer
from ui.dialogs.confirm import ConfirmDialog, DialogConfirmer
from ui.qt import QObject, QWidget, Signal


class AgentQuestions(QObject):
    opened = Signal(object)
    """A question dialog was shown (the dialog)."""

    def __init__(self, parent: QWidget, *, guard_ms: int = GUARD_MS) -> None:
        super().__init__(parent)
        self._parent = parent
        self._guard_ms = guard_ms
        self._one_at_a_time = asyncio.Lock()
        self.dialog: QuestionDialog | None = None
        """The question on screen, if any."""
        self.confirm = DialogConfirmer(parent, factory=self._write_dialog)

    async def permission(self, question: PermissionQuestion) -> str | None:
        """The id of the allow option the user chose, or None (Cancel, Esc, closed)."""
        async with self._one_at_a_time:
            dialog = PermissionDialog(question, self._parent, guard_ms=self._guard_ms)
            decision = await self._show(dialog)
            return dialog.picked if decision is Decision.CONFIRMED else None

    async def write(self, summary: WriteSummary) -> Decision:
        """The write confirmation dialog every write uses (``DialogConfirmer``)."""
        async with self._one_at_a_time:
            try:
                return await self.confirm(summary)
            finally:
                self.dialog = None

    def _write_dialog(
        self, summary: WriteSummary, parent: QWidget | None, *, remaining: float | None
    ) -> ConfirmDialog:
        dialog = ConfirmDialog(summary, parent, remaining=remaining, guard_ms=self._guard_ms)
        self.dialog = dialog
        self.opened.emit(dialog)
        return dialog

    async def _show(self, dialog: QuestionDialog) -> Decision:
        self.dialog = dialog
        self.opened.emit(dialog)
        try:
            return await answer(dialog)
        finally:
            self.dialog = None
            dialog.deleteLater()
