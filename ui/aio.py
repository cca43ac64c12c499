"""asyncio inside Qt: the tasks a Qt object owns, and awaiting one emission of a signal.

Slots cannot await, so a slot that has async work starts a task. ``OwnedTasks`` keeps each such
task referenced (asyncio holds tasks weakly), cancels them when their Qt owner is destroyed (and
when the owner's ``closeEvent``/``aclose`` says so), and logs a task that failed — by the
exception's type and where it was raised, never its message, which may quote what a user typed
or a server sent. ``emitted`` turns the next emission of a signal into an awaitable with a
deadline, and always disconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import traceback
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ui.qt import QObject, SignalInstance

log = logging.getLogger(__name__)

T = TypeVar("T")


class OwnedTasks:
    """The asyncio tasks one object started: kept until they end, cancelled with their owner.

    ``owner`` is the Qt object whose destruction cancels them; ``None`` for an owner that is not
    a Qt object, which cancels through ``cancel()`` or ``aclose()`` itself.
    """

    def __init__(self, owner: QObject | None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        if owner is not None:
            # Bound to the set, not to the owner: the owner's Python side may be gone by then.
            tasks = self._tasks
            owner.destroyed.connect(lambda *_: _cancel_all(tasks))

    def start(self, coro: Coroutine[Any, Any, T], *, eager: bool = False) -> asyncio.Task[T]:
        """Run ``coro`` as a task owned here. ``eager`` runs it inside this call up to its first
        real wait, so work that ends at once costs no extra turn of the loop."""
        # Named now: an eagerly started task that ended at once no longer holds its coroutine.
        name = getattr(coro, "__qualname__", "a task")
        if eager:
            task = asyncio.Task(coro, loop=asyncio.get_event_loop(), eager_start=True)
        else:
            task = asyncio.ensure_future(coro)
        if task.done():
            _report(task, name)
        else:
            self._tasks.add(task)
            task.add_done_callback(lambda ended: self._ended(ended, name))
        return task

    def _ended(self, task: asyncio.Task[Any], name: str) -> None:
        self._tasks.discard(task)
        _report(task, name)

    def __len__(self) -> int:
        return len(self._tasks)

    def cancel(self) -> None:
        """Cancel every task still running (the owner is closing)."""
        _cancel_all(self._tasks)

    async def wait(self, within: float = 5.0) -> None:
        """Wait up to ``within`` seconds for the tasks still running to end."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=within)

    async def aclose(self, within: float = 5.0) -> None:
        """Cancel every task and wait up to ``within`` seconds for them to end."""
        self.cancel()
        await self.wait(within)


def _cancel_all(tasks: set[asyncio.Task[Any]]) -> None:
    for task in list(tasks):
        if not task.get_loop().is_closed():  # at exit Qt may destroy the owner after the loop
            task.cancel()


def _report(task: asyncio.Task[Any], name: str) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is None:
        return
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    place = f"{where[0].filename}:{where[0].lineno}" if where else "?"
    log.error("%s failed with %s at %s", name, type(exc).__name__, place)


def emitted(
    signal: SignalInstance, within: float | None, when: Callable[..., bool] = lambda *_: True
) -> Coroutine[Any, Any, tuple[Any, ...]]:
    """Await the arguments of the next emission of ``signal`` for which ``when(*args)`` holds.

    Listening starts at this call, so a caller can start what emits in between and miss
    nothing; call it from a coroutine and await what it returns. Raises ``TimeoutError`` after
    ``within`` seconds. ``within=None`` waits until cancelled: only for a wait on a person (an
    answer, closing a window), never on a machine.
    """
    heard: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def on_signal(*args: Any) -> None:
        if not heard.done() and when(*args):
            heard.set_result(args)

    signal.connect(on_signal)
    return _heard(signal, on_signal, heard, within)


async def _heard(
    signal: SignalInstance,
    on_signal: Callable[..., None],
    heard: asyncio.Future[tuple[Any, ...]],
    within: float | None,
) -> tuple[Any, ...]:
    try:
        async with asyncio.timeout(within):
            return await heard
    finally:
        with contextlib.suppress(RuntimeError):  # the sender is gone: nothing left to disconnect
            signal.disconnect(on_signal)
