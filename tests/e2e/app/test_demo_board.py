"""The demo's task board in a real web view: Start build on a ready task, "Move and start build"
in Helm's dialog, the task file moved to doing and the build running in the Agents tab."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.demo import PROJECT, set_up_demo
from broker.agents import AgentHost
from broker.agents.profiles import AGENTS, AgentProfile
from broker.orchestrate.kind import CONNECTION, OrchestrateKind
from broker.workspaces import set_build_agent
from tests.e2e.app.test_demo import SETTLED
from tests.e2e.host.kit import evaluate, wait_ready
from tests.helpers import new_broker
from tests.ui.agents.kit import WAIT, next_emit, until_text
from tests.unit.agents.agent_setup import AGENT, SHORT
from ui.agents.tab import AgentsTab
from ui.dialogs.build import BuildDialog, DialogBuildAsker
from ui.dialogs.confirm import DialogConfirmer
from ui.host.host import ExtensionHost

BOARD = "dev.helm.demo.board"
TASK = ".tdt-project/tdt-software-production/tasks/T-1.md"


def test_the_demo_board_moves_a_ready_task_to_doing_and_starts_its_build(
    run: Any, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the demo's TDT stand-in: no tdt to set up
    broker = new_broker(tmp_path / "home")
    run(broker.__aenter__())
    workspace = run(set_up_demo(broker))
    settings = broker.home.settings().workspace(workspace)
    task = settings.projects[PROJECT] / TASK
    AGENTS.store(broker.home, broker.credentials).save(
        AgentProfile("scripted", (sys.executable, AGENT)), {"key": None}
    )
    set_build_agent(broker.home, workspace, "scripted")
    agents = AgentHost(broker.home, broker.credentials, limits=SHORT, writes=broker.writes)
    tab = AgentsTab(lambda: (agents, ""), guard_ms=0)
    qtbot.addWidget(tab)
    asker = DialogBuildAsker(guard_ms=0)
    broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, tab)
    host = ExtensionHost(broker, DialogConfirmer())
    view = host.view(workspace, BOARD, settings.extensions[BOARD].path, "index.html", "test")

    async def scenario() -> tuple[list[str], str, str]:
        await wait_ready(view)
        await evaluate(view, SETTLED % "status")
        rows = await evaluate(view, "[...document.querySelectorAll('#rows tr')].map(r => r.textContent)")
        opened = next_emit(asker.opened)
        await evaluate(view, "(document.querySelector('#rows button').click(), true)")
        dialog: BuildDialog = await opened
        assert dialog.both_button is not None and dialog.both_button.text() == "Move and start build"
        assert 'Implement task T-1 ("Add a contact page") of project site.' in dialog.prompt_box.toPlainText()
        dialog.both_button.click()
        await tab.load()
        assert tab.page is not None
        await until_text(tab.page, "Implement task T-1")
        assert tab.page.turn is not None
        await asyncio.wait_for(asyncio.shield(tab.page.turn), WAIT)
        return rows, task.read_text(encoding="utf-8"), tab.page.transcript.toPlainText()

    try:
        rows, text, transcript = run(scenario(), 60)
    finally:
        run(host.aclose())
        run(tab.aclose())
        run(broker.aclose())
    assert rows == [
        "T-1Add a contact pagereadyStart build",
        "T-2Compress the hero imagedraft",
        "T-3Set up the site's builddone",
    ]
    assert "status: doing" in text and "status: ready" not in text
    assert "Build started by Task board (dev.helm.demo.board)" in transcript
    outcomes = [(r.kind, r.outcome) for r in broker.audit.records() if r.kind in ("files", "orchestrate")]
    assert outcomes == [
        ("files", "sending"),
        ("files", "ok"),
        ("orchestrate", "starting"),
        ("orchestrate", "started"),
    ]
