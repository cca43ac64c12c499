"""The Agents page on a real Helm home with the scripted ACP agent: fixtures and waits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.agents import AgentHost, Limits
from tests.unit.agents.agent_setup import SHORT, Setup, make_setup
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


@contextmanager
def own_page(qtbot: QtBot, setup: Setup, run: Any, limits: Limits = SHORT) -> Iterator[AgentsPage]:
    """A page on its own host with ``limits``; both closed at the end, the agents stopped."""
    host = setup.host(limits)
    page = make_page(qtbot, host)
    try:
        yield page
    finally:
        run(page.aclose())
        run(host.aclose())


@pytest.fixture
def page(qtbot: QtBot, setup: Setup, run: Any) -> Iterator[AgentsPage]:
    with own_page(qtbot, setup, run) as page:
        yield page


def loading_agent(setup: Setup, tmp_path: Path) -> Path:
    """The scripted agent as one that keeps its sessions (in the folder returned) and loads them."""
    state = tmp_path / "agent-state"
    state.mkdir()
    setup.add_agent("scripted", "--load", "--state", str(state))
    return state


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


OPTIONS = [["once", "Yes", "allow_once"], ["always", "Always", "allow_always"], ["no", "No", "reject_once"]]


def ask(
    title: str = "Run the tests", kind: str = "execute", options: Any = None, **extra: Any
) -> dict[str, Any]:
    """The scripted agent's step that asks for permission with ``options`` (an allow once, an
    allow always and a reject, unless given)."""
    return {"ask": {"id": "call-1", "title": title, "kind": kind, "options": options or OPTIONS, **extra}}


def said(transcript: str, prefix: str) -> list[str]:
    return [line for line in transcript.splitlines() if line.startswith(prefix)]
