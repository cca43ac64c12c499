"""Test kit for author mode: the real dialogs without their input guard, signals as awaits."""

from __future__ import annotations

import asyncio
from typing import Any

from broker.extensions import Reviewed
from ui.dev import CallRecord, DevWindow
from ui.dialogs.review import ReviewDialog, review_dialog
from ui.qt import QWidget


class Reviews:
    """The real review dialog, without the input guard so a test click counts."""

    def __init__(self) -> None:
        self.shown: asyncio.Queue[ReviewDialog] = asyncio.Queue()

    def __call__(self, reviewed: Reviewed, parent: QWidget | None) -> ReviewDialog:
        dialog = review_dialog(reviewed, parent, guard_ms=0)
        self.shown.put_nowait(dialog)
        return dialog


async def next_emission(signal: Any, timeout: float = 20.0) -> tuple[Any, ...]:
    got: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def on_emit(*values: Any) -> None:
        if not got.done():
            got.set_result(values)

    signal.connect(on_emit)
    try:
        return await asyncio.wait_for(got, timeout)
    finally:
        signal.disconnect(on_emit)


async def start_and_approve(window: DevWindow, reviews: Reviews) -> CallRecord:
    recorded = asyncio.ensure_future(next_emission(window.inspector.recorded))
    refresh = asyncio.ensure_future(window.refresh())
    dialog = await asyncio.wait_for(reviews.shown.get(), 20.0)
    dialog.accept_button.click()
    await asyncio.wait_for(refresh, 20.0)
    (record,) = await recorded
    return record
