"""The tasks a Qt object owns, and awaiting a signal, on the qasync loop Helm runs."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from ui.aio import OwnedTasks, emitted
from ui.qt import QObject, Signal


class Sender(QObject):
    said = Signal(str, int)


class SecretFailure(Exception):
    pass


async def forever() -> None:
    await asyncio.Event().wait()


def test_destroying_the_owner_cancels_its_tasks(qtbot: QtBot, run: Any) -> None:
    parent = QObject()
    owner = QObject(parent)
    tasks = OwnedTasks(owner)

    async def scenario() -> asyncio.Task[None]:
        task = tasks.start(forever())
        await asyncio.sleep(0)
        parent.deleteLater()  # the owner goes with its parent, as a window's children do
        await asyncio.wait([task], timeout=5.0)
        return task

    task = run(scenario())
    assert task.cancelled()
    assert len(tasks) == 0


def test_a_task_is_kept_until_it_ends_and_aclose_cancels_the_rest(run: Any) -> None:
    owner = QObject()
    tasks = OwnedTasks(owner)

    async def scenario() -> tuple[int, int, bool]:
        done = tasks.start(asyncio.sleep(0))
        running = tasks.start(forever())
        await done
        await asyncio.sleep(0)
        during = len(tasks)
        await tasks.aclose(within=5.0)
        return during, len(tasks), running.cancelled()

    assert run(scenario()) == (1, 0, True)


def test_a_failed_task_is_logged_by_type_and_place_never_its_message(
    run: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tasks = OwnedTasks(QObject())

    async def fails() -> None:
        await asyncio.sleep(0)
        raise SecretFailure("token=hunter2")

    async def scenario() -> None:
        task = tasks.start(fails())
        await asyncio.wait([task], timeout=5.0)
        await asyncio.sleep(0)  # the done callback runs on the next turn

    with caplog.at_level(logging.ERROR, logger="ui.aio"):
        run(scenario())
    assert [r.levelno for r in caplog.records] == [logging.ERROR]
    line = caplog.records[0].getMessage()
    assert "fails failed with SecretFailure at " in line and "test_aio.py" in line
    assert "hunter2" not in caplog.text


def test_a_task_that_fails_at_once_when_started_eagerly_is_logged_too(
    run: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tasks = OwnedTasks(None)

    async def fails_at_once() -> None:
        raise SecretFailure("nothing to see")

    async def scenario() -> bool:
        return tasks.start(fails_at_once(), eager=True).done()

    with caplog.at_level(logging.ERROR, logger="ui.aio"):
        assert run(scenario())
    assert "fails_at_once failed with SecretFailure" in caplog.text
    assert len(tasks) == 0


def test_emitted_gives_the_first_matching_emission_and_disconnects(run: Any) -> None:
    sender = Sender()

    async def scenario() -> tuple[Any, ...]:
        waiting = asyncio.ensure_future(emitted(sender.said, 5.0, lambda text, _n: text == "b"))
        await asyncio.sleep(0)
        sender.said.emit("a", 1)
        sender.said.emit("b", 2)
        return await waiting

    assert run(scenario()) == ("b", 2)
    assert sender.receivers("2said(QString,int)") == 0


def test_emitted_raises_timeout_error_after_its_deadline_and_disconnects(run: Any) -> None:
    sender = Sender()

    async def scenario() -> None:
        await emitted(sender.said, 0.05)

    with pytest.raises(TimeoutError):
        run(scenario())
    assert sender.receivers("2said(QString,int)") == 0
