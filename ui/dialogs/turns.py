"""What Helm's askers share: one question at a time per requester, before its deadline, in view.

The write confirmer (``ui.dialogs.confirm.DialogConfirmer``) and the build asker
(``ui.dialogs.build.DialogBuildAsker``) are both awaited by the broker, for any requester, and
both answer with a dialog. ``Turns`` is their common part: a lock per requester, so one dialog
at a time is open for each and the rest wait their turn; the time a dialog may stay open once
its turn comes (the token's time less the wait and a margin, read on one clock); the window the
dialogs belong to and how they are shown when the user is elsewhere (``ui.attention``); and the
list of dialogs on screen. What a dialog says and what its answer means stay with each asker.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from broker.context import AgentRequester, Requester
from broker.summary import Decision
from ui.aio import emitted
from ui.attention import Attention
from ui.dialogs.base import QuestionDialog
from ui.qt import QWidget

EXPIRY_MARGIN_SECONDS = 2.0
"""End the dialog this long before the token runs out, so a Confirm always finds it valid."""


def turn_of(who: Requester) -> tuple[str, ...]:
    """Whose turn a dialog waits for: one at a time per extension, app, agent session or part of
    Helm."""
    if isinstance(who, AgentRequester):
        return (who.role, who.workspace, who.agent, who.session)
    return (who.role, who.workspace, who.id)


class Turns[D: QuestionDialog]:
    """The turns, the clock and the open dialogs of one asker (see the module docstring)."""

    def __init__(
        self,
        parent: QWidget | None,
        *,
        margin: float = EXPIRY_MARGIN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._parent = parent
        self._margin = margin
        self._clock = clock
        self._turns: dict[tuple[str, ...], asyncio.Lock] = {}
        self.open_dialogs: list[D] = []
        self.attention: Attention | None = None
        """How dialogs are shown when the user is elsewhere (None: opened as they come)."""

    def set_parent(self, parent: QWidget | None, attention: Attention | None = None) -> None:
        """The window the dialogs belong to (made after the host that needs this asker)."""
        self._parent = parent
        self.attention = attention

    def turn(self, who: Requester) -> asyncio.Lock:
        """The lock ``who``'s questions wait on, one after the other."""
        return self._turns.setdefault(turn_of(who), asyncio.Lock())

    def remaining(self, expires_in: float, received: float) -> float:
        """How long a dialog may stay open now, for a token that had ``expires_in`` seconds left
        when its question arrived at ``received`` (0 or less: it came too late)."""
        return expires_in - (self._clock() - received) - self._margin

    def show(
        self, dialog: D, within: float | None, title: str, wants: str
    ) -> Coroutine[Any, Any, tuple[Any, ...]]:
        """Put ``dialog`` on screen and return the wait for its ``Decision``: ``TimeoutError``
        after ``within`` seconds. When the user is elsewhere the dialog is shown through
        ``attention``, which tells them in ``title`` and ``wants``."""
        decided = emitted(dialog.decided, within, lambda d: isinstance(d, Decision))
        self.open_dialogs.append(dialog)
        dialog.finished.connect(lambda _result: self._forget(dialog))
        if self.attention is None:
            dialog.open()
        else:
            self.attention.show(dialog, title, wants)
        return decided

    @staticmethod
    def dismiss(dialog: D, expired: bool) -> None:
        """Close the answered ``dialog``; an expired one stays open to say so until the user
        closes it."""
        if expired and dialog.isVisible():
            dialog.finished.connect(dialog.deleteLater)
        else:
            dialog.close()
            dialog.deleteLater()

    def _forget(self, dialog: D) -> None:
        if dialog in self.open_dialogs:
            self.open_dialogs.remove(dialog)
