"""Helm's window builds the coding agents' host and stops every agent when it closes."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from app.gui import until_closed
from app.window import Window
from broker.agents import profiles
from broker.workspaces import add_workspace
from tests.helpers import new_broker
from tests.ui.agents.kit import send, until_text
from tests.unit.agents.agent_setup import AGENT
from tests.unit.agents.test_agent_lifecycle import live_in_group, until


def test_closing_the_window_ends_a_running_turn_and_stops_the_agent(
    run: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()

    async def scenario() -> tuple[str, bool]:
        async with new_broker(tmp_path / "home") as broker:
            broker.home.ensure()
            add_workspace(broker.home, "ws", root)
            profile = profiles.AgentProfile("scripted", (sys.executable, AGENT))
            profiles.AGENTS.store(broker.home, broker.credentials).save(profile, {})
            window = Window(broker)
            tab = window.agents
            assert window.window.tabs.tabText(window.window.tabs.indexOf(tab)) == "Agents"
            assert tab.page is None  # made when the tab is first shown
            await tab.load()
            page = tab.page
            assert page is not None
            send(page, [{"pid": 1}, {"wait_cancel": 1}])
            await until_text(page, "waiting for cancel")
            await window.aclose()
            return page.transcript.toPlainText(), page.session is None

    text, dropped = run(scenario(), timeout=60)
    match = re.search(r"pgid (\d+)", text)
    assert match is not None
    assert "The turn was cancelled." in text
    assert dropped
    run(until(lambda: live_in_group(int(match[1])) == []))


def test_sigterm_closes_the_window_and_stops_a_running_agent(run: Any, qtbot: QtBot, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()

    async def scenario() -> str:
        async with new_broker(tmp_path / "home") as broker:
            broker.home.ensure()
            add_workspace(broker.home, "ws", root)
            profile = profiles.AgentProfile("scripted", (sys.executable, AGENT))
            profiles.AGENTS.store(broker.home, broker.credentials).save(profile, {})
            window = Window(broker)
            await window.agents.load()
            page = window.agents.page
            assert page is not None
            send(page, [{"pid": 1}, {"hang": {"child": True, "ignore_term": True}}])
            await until_text(page, "child")
            waiting = asyncio.ensure_future(until_closed(window.closed))
            await asyncio.sleep(0)  # the handlers are in place
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.wait_for(waiting, 10)
            await window.aclose()
            return page.transcript.toPlainText()

    text = run(scenario(), timeout=60)
    match = re.search(r"pgid (\d+)", text)
    assert match is not None
    run(until(lambda: live_in_group(int(match[1])) == []))
