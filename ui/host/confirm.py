"""The Confirmer the extension host uses: Helm's own dialog, answered by the user.

The dialog is a Qt window outside the web view, so a page cannot open, see or answer it. The
confirmation is awaited (the dialog is shown window-modal with ``open()``), never run in a
nested event loop. One dialog at a time: concurrent writes wait their turn. A dialog that is
not answered before the write's token runs out is closed and the write expires.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from broker.summary import Decision, WriteSummary
from ui.qt import QDialog, QWidget

DialogFactory = Callable[[WriteSummary, QWidget | None], QDialog]
"""Builds the confirmation dialog for one write (Cancel must have the focus)."""

EXPIRY_MARGIN_SECONDS = 5.0
"""Close the dialog a little before the token expires, so a Confirm always finds it valid."""


class DialogConfirmer:
    """Shows the dialog ``factory`` builds and turns the user's answer into a ``Decision``."""

    def __init__(self, factory: DialogFactory, parent: QWidget | None = None) -> None:
        self._factory = factory
        self._parent = parent
        self._turn = asyncio.Lock()

    async def __call__(self, summary: WriteSummary) -> Decision:
        async with self._turn:
            return await self._ask(summary)

    async def _ask(self, summary: WriteSummary) -> Decision:
        dialog = self._factory(summary, self._parent)
        answered: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def finished(result: int) -> None:
            if not answered.done():
                answered.set_result(result)

        dialog.finished.connect(finished)
        dialog.open()
        try:
            remaining = max(summary.expires_in - EXPIRY_MARGIN_SECONDS, 0.0)
            result = await asyncio.wait_for(answered, remaining)
        except TimeoutError:
            return Decision.EXPIRED
        finally:
            dialog.finished.disconnect(finished)
            dialog.close()
            dialog.deleteLater()
        if result == QDialog.DialogCode.Accepted.value:
            return Decision.CONFIRMED
        return Decision.DECLINED
