"""The Agents page on a real Helm home with the scripted ACP agent: fixtures and waits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.agents import AgentHost
from tests.unit.agents.agent_setup import Setup, make_setup
from ui.agents.page import AgentsPage
from ui.dialogs.base import QuestionDialog
from ui.qt import Signal

WAIT = 20.0


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    s = make_setup(tmp_path)
    s.add_agent()
    return s


def make_page(qtbot: QtBot, host: AgentHost) -> AgentsPage:
    page = AgentsPage(host, guard_ms=0)
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    return page


@pytest.fixture
def page(qtbot: QtBot, setup: Setup, run: Any) -> Iterator[AgentsPage]:
    host = setup.host()
    page = make_page(qtbot, host)
    yield page
    run(page.aclose())
    run(host.aclose())


async def next_emit(signal: Signal, within: float = WAIT) -> Any:
    """The argument of the next emission of ``signal`` (awaited, not polled)."""
    got: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def heard(*args: Any) -> None:
        if not got.done():
            got.set_result(args[0] if args else None)

    signal.connect(heard)
    try:
        return await asyncio.wait_for(got, within)
    finally:
        signal.disconnect(heard)


async def question(page: AgentsPage) -> QuestionDialog:
    """The question dialog on screen now, or the next one the page shows."""
    dialog = page.questions.dialog
    return dialog if dialog is not None else await next_emit(page.questions.opened)


def send(page: AgentsPage, steps: list[dict[str, Any]]) -> asyncio.Task[None]:
    """Type the scripted agent's steps as the prompt and press Send."""
    page.prompt.setPlainText(json.dumps(steps))
    assert page.send_button.isEnabled()
    page.send_button.click()
    assert page.turn is not None
    return page.turn


async def finished(page: AgentsPage, within: float = WAIT) -> str:
    """The transcript once the running turn is over."""
    assert page.turn is not None
    await asyncio.wait_for(asyncio.shield(page.turn), within)
    return page.transcript.toPlainText()


async def until_text(page: AgentsPage, text: str, within: float = WAIT) -> None:
    """Wait until the transcript shows ``text`` (its document says when it changes)."""
    async with asyncio.timeout(within):
        while text not in page.transcript.toPlainText():
            await next_emit(page.transcript.document().contentsChanged, within)


def said(transcript: str, prefix: str) -> list[str]:
    return [line for line in transcript.splitlines() if line.startswith(prefix)]
