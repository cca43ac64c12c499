"""Builds a tool starts (helm.orchestrate): the real broker, the Start build dialog answered by
clicking, the scripted ACP agent in the Agents tab, a files write offered beside the build."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker, CallContext
from broker.agents import AgentHost
from broker.agents.profiles import AGENTS, AgentProfile
from broker.orchestrate.kind import CONNECTION, OrchestrateKind
from broker.workspaces import add_project, set_build_agent
from tests.helpers import ScriptedConfirmer, new_broker, setup_extension
from tests.ui.agents.kit import WAIT, ask, next_emit, question, until_text
from tests.unit.agents.agent_setup import AGENT, SHORT
from ui.agents.tab import AgentsTab
from ui.dialogs.build import BuildDialog, DialogBuildAsker
from ui.qt import QApplication, QLabel, QPlainTextEdit

TASK = ".tdt-project/tdt-software-production/tasks/T-1.md"
READY = "---\nid: T-1\ntitle: Board\nstatus: ready\n---\nMake the board.\n"
DOING = READY.replace("status: ready", "status: doing")
MANIFEST: dict[str, Any] = {
    "id": "com.example.board",
    "name": "Task board",
    "version": "1.0.0",
    "kind": "tool",
    "entry": "index.html",
    "permissions": {"write": True, "orchestrate": True},
    "orchestrate": {"prompt": "{steps}", "root": "project"},
    "connections": [
        {
            "id": "sp",
            "kind": "files",
            "root": "project",
            "paths": [".tdt-project/tdt-software-production/**"],
            "operations": ["list", "read", "write"],
        }
    ],
}


@dataclass
class Board:
    broker: Broker
    ctx: CallContext
    asker: DialogBuildAsker
    tab: AgentsTab
    task: Path
    run: Any

    def build(self, steps: list[dict[str, Any]], *, move: bool = False, **extra: Any) -> asyncio.Task[Any]:
        """The tool calls helm.orchestrate.build (with the move of its task to doing)."""
        args: dict[str, Any] = {"input": {"project": "app", "steps": json.dumps(steps)}, **extra}
        if move:
            args["orWrite"] = self.move()
        return asyncio.ensure_future(
            self.broker.request(self.ctx, CONNECTION, "build", args, ScriptedConfirmer())
        )

    def move(self, expected: str | None = None) -> dict[str, Any]:
        sha = expected or hashlib.sha256(self.task.read_bytes()).hexdigest()
        return {
            "connection": "sp",
            "operation": "write",
            "args": {"project": "app", "path": TASK, "text": DOING, "expected_sha256": sha},
            "label": "Move",
        }

    async def status(self, session: str, ctx: CallContext | None = None) -> dict[str, Any]:
        return await self.broker.request(
            ctx or self.ctx, CONNECTION, "status", {"session": session}, ScriptedConfirmer()
        )

    def audit(self) -> list[tuple[str, str, str, str]]:
        return [(r.kind, r.operation, r.decision, r.outcome) for r in self.broker.audit.records()]

    async def ended(self) -> str:
        page = self.tab.page
        assert page is not None and page.turn is not None
        await asyncio.wait_for(asyncio.shield(page.turn), WAIT)
        return page.transcript.toPlainText()


@pytest.fixture
def board(qtbot: QtBot, tmp_path: Path, run: Any) -> Iterator[Board]:
    broker = new_broker(tmp_path / "home")
    run(broker.__aenter__())
    ctx = run(setup_extension(broker, tmp_path, MANIFEST))
    project = tmp_path / "root" / "app"
    task = project / TASK
    task.parent.mkdir(parents=True)
    task.write_text(READY, encoding="utf-8")
    add_project(broker.home, "ws", "app", project)
    AGENTS.store(broker.home, broker.credentials).save(
        AgentProfile("scripted", (sys.executable, AGENT)), {"key": None}
    )
    set_build_agent(broker.home, "ws", "scripted")
    host = AgentHost(broker.home, broker.credentials, limits=SHORT, writes=broker.writes)
    tab = AgentsTab(lambda: (host, ""), guard_ms=0)
    qtbot.addWidget(tab)
    tab.show()
    asker = DialogBuildAsker(guard_ms=0)
    broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, tab)
    try:
        yield Board(broker, ctx, asker, tab, task, run)
    finally:
        run(tab.aclose())
        run(broker.aclose())


async def dialog_of(board: Board) -> BuildDialog:
    dialog: BuildDialog = await next_emit(board.asker.opened)
    return dialog


def no_session(board: Board) -> bool:
    return board.tab.page is None or board.tab.page.session is None


def texts(dialog: BuildDialog) -> str:
    shown = [w.text() for w in dialog.findChildren(QLabel)] + [
        w.toPlainText() for w in dialog.findChildren(QPlainTextEdit)
    ]
    return "\n".join(shown)


def test_the_dialog_shows_the_build_starts_nothing_before_a_click_and_cancel_declines(board: Board) -> None:
    steps = [{"say": "built"}]

    async def scenario() -> dict[str, Any]:
        call = board.build(steps)
        dialog = await dialog_of(board)
        shown = texts(dialog)
        for value in (
            "Task board (com.example.board)",
            "scripted",
            "project app of workspace ws",
            json.dumps(steps),
        ):
            assert value in shown
        assert dialog.focusWidget() is dialog.cancel_button and dialog.cancel_button.isDefault()
        assert [b.text() for b in (dialog.cancel_button, dialog.accept_button)] == ["Cancel", "Start build"]
        assert dialog.write_button is None
        assert board.audit() == [] and no_session(board)  # nothing happened before a click
        dialog.cancel_button.click()
        return await call

    result = board.run(scenario())
    assert result["ok"] is False and result["error"]["code"] == "declined"
    assert board.audit() == [("orchestrate", "build", "declined", "nothing started")]


def test_start_runs_the_build_in_the_agents_tab_and_status_tells_its_state_without_text(board: Board) -> None:
    async def scenario() -> tuple[dict[str, Any], list[str], str]:
        call = board.build([{"say": "SECRET-TRANSCRIPT"}, {"wait_cancel": True}])
        (await dialog_of(board)).accept_button.click()
        result = await call
        session = result["data"]["session"]
        page = board.tab.page
        assert page is not None
        await until_text(page, "SECRET-TRANSCRIPT")
        states = [(await board.status(session))["data"]["state"]]
        await page.cancel()
        transcript = await board.ended()
        states.append((await board.status(session))["data"]["state"])
        return result, states, transcript

    result, states, transcript = board.run(scenario())
    assert result["ok"] is True and set(result["data"]) == {"session"}
    assert states == ["running", "cancelled"]
    assert "Build started by Task board (com.example.board)" in transcript
    assert board.audit() == [
        ("orchestrate", "build", "confirmed", "starting"),
        ("orchestrate", "build", "confirmed", "started"),
    ]


def test_status_reports_waiting_ended_and_failed_and_only_to_the_extension_that_started_it(
    board: Board,
) -> None:
    async def scenario() -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        call = board.build([ask(), {"say": "done"}])
        (await dialog_of(board)).accept_button.click()
        session = (await call)["data"]["session"]
        page = board.tab.page
        assert page is not None
        permission = await question(page)
        waiting = await board.status(session)
        permission.cancel_button.click()
        await board.ended()
        ended = await board.status(session)
        call = board.build([{"crash": 3}])
        (await dialog_of(board)).accept_button.click()
        crashed = (await call)["data"]["session"]
        await board.ended()
        failed = await board.status(crashed)
        other = CallContext("ws", "com.example.other", "i1")
        return (
            [r["data"]["state"] for r in (waiting, ended, failed)],
            ended,
            await board.status(session, other),
        )

    states, ended, other = board.run(scenario())
    assert states == ["waiting", "ended", "failed"]
    assert set(ended["data"]) == {"session", "state"}  # the state, never the transcript
    assert other["ok"] is False and other["error"]["code"] == "refused"


@pytest.mark.parametrize(
    ("answer", "moved", "builds", "write_code"),
    [
        pytest.param("cancel", False, False, "declined", id="cancel"),
        pytest.param("build", False, True, "declined", id="start-build-alone"),
        pytest.param("write", True, False, None, id="move-alone"),
        pytest.param("both", True, True, None, id="move-and-start-build"),
    ],
)
def test_each_answer_of_the_move_dialog_does_what_it_says(
    board: Board, answer: str, moved: bool, builds: bool, write_code: str | None
) -> None:
    async def scenario() -> dict[str, Any]:
        call = board.build([{"say": "built"}], move=True)
        dialog = await dialog_of(board)
        shown = texts(dialog)
        assert "Confirm file change" in shown and "+status: doing" in shown and TASK in shown
        buttons = [dialog.cancel_button, dialog.accept_button, dialog.write_button, dialog.both_button]
        assert [b.text() for b in buttons if b is not None] == [
            "Cancel",
            "Start build",
            "Move",
            "Move and start build",
        ]
        assert dialog.focusWidget() is dialog.cancel_button
        assert board.task.read_text() == READY and board.audit() == []
        chosen = {"cancel": dialog.cancel_button, "build": dialog.accept_button}.get(answer)
        (chosen or (dialog.write_button if answer == "write" else dialog.both_button)).click()
        result = await call
        if builds:
            await board.ended()
        return result

    result = board.run(scenario())
    assert (board.task.read_text() == DOING) is moved
    assert ("session" in (result.get("data") or {})) is builds
    audit = board.audit()
    writes = [r for r in audit if r[0] == "files"]
    built = [r[3] for r in audit if r[0] == "orchestrate"]
    if answer == "cancel":
        assert result["error"]["code"] == "declined" and result["data"] is None
        assert writes == [("files", "write", "declined", "nothing sent")]
        assert built == ["nothing started"]
        return
    assert result["ok"] is True
    write = result["data"]["write"]
    assert (write["error"] or {}).get("code") == write_code
    if moved:
        assert writes == [("files", "write", "confirmed", "sending"), ("files", "write", "confirmed", "ok")]
    else:
        assert writes == [("files", "write", "declined", "nothing sent")]
    assert built == (["starting", "started"] if builds else ["nothing started"])
    if answer == "both":  # the write first, the build only after it succeeded
        assert [r[0] for r in audit] == ["files", "files", "orchestrate", "orchestrate"]


def test_a_failed_move_starts_no_build(board: Board) -> None:
    async def scenario() -> dict[str, Any]:
        args = {"input": {"project": "app", "steps": "[]"}, "orWrite": board.move()}
        call = asyncio.ensure_future(
            board.broker.request(board.ctx, CONNECTION, "build", args, ScriptedConfirmer())
        )
        dialog = await dialog_of(board)
        board.task.write_text(
            READY + "edited meanwhile\n", encoding="utf-8"
        )  # the file changed under the dialog
        assert dialog.both_button is not None
        dialog.both_button.click()
        return await call

    result = board.run(scenario())
    assert result["ok"] is False and result["error"]["code"] == "conflict"
    assert result["data"]["write"]["error"]["code"] == "conflict"
    assert no_session(board)
    assert [r for r in board.audit() if r[0] == "orchestrate"] == [
        ("orchestrate", "build", "confirmed", "nothing started: the write failed")
    ]


def test_a_stopped_extension_cannot_start_builds(board: Board) -> None:
    board.broker.activity.stop("ws", "com.example.board")

    async def scenario() -> dict[str, Any]:
        result: dict[str, Any] = await board.build([{"say": "built"}], move=True)
        return result

    result = board.run(scenario())
    assert result["ok"] is False and result["error"]["code"] == "refused"
    assert "stopped" in result["error"]["message"]
    assert board.asker.open_dialogs == [] and board.audit() == [] and board.task.read_text() == READY
    activity = board.broker.activity.history()
    assert activity[-1].connection == CONNECTION and activity[-1].operation == "build"


@pytest.mark.parametrize("move", [False, True], ids=["build", "move-and-build"])
def test_stopping_the_extension_while_the_dialog_is_open_closes_it_and_answers_the_stop(
    board: Board, move: bool
) -> None:
    async def scenario() -> dict[str, Any]:
        call = board.build([{"say": "built"}], move=move)
        await dialog_of(board)
        board.broker.activity.stop("ws", "com.example.board")
        result: dict[str, Any] = await asyncio.wait_for(call, WAIT)
        return result

    result = board.run(scenario())
    assert result["ok"] is False and result["error"]["code"] == "refused"
    stop = "the user stopped com.example.board in Helm while this call was running"
    assert stop in result["error"]["message"]
    assert board.asker.open_dialogs == []
    assert not any(isinstance(w, BuildDialog) and w.isVisible() for w in QApplication.topLevelWidgets())
    assert board.task.read_text() == READY and no_session(board)
    built = [("orchestrate", "build", "cancelled", "nothing started")]
    assert board.audit() == built + ([("files", "write", "cancelled", "nothing sent")] if move else [])


def test_a_move_whose_confirmation_runs_out_with_the_dialog_open_answers_confirmation_required(
    board: Board,
) -> None:
    # The token lives 300 s; ending the dialog 299.9 s early lets it run out a moment after it opens.
    asker = DialogBuildAsker(margin=299.9, guard_ms=0)
    board.broker.builtins[CONNECTION] = OrchestrateKind(board.broker, asker, board.tab)

    async def scenario() -> tuple[dict[str, Any], BuildDialog]:
        call = board.build([{"say": "built"}], move=True)
        dialog = await dialog_of(replace(board, asker=asker))
        return await asyncio.wait_for(call, WAIT), dialog

    result, dialog = board.run(scenario())
    assert result["ok"] is False and result["error"]["code"] == "confirmation_required"
    assert board.task.read_text() == READY and no_session(board)
    assert board.audit() == [
        ("files", "write", "expired", "nothing sent"),
        ("orchestrate", "build", "expired", "nothing started"),
    ]
    assert dialog.isVisible() and dialog.notice.text().startswith("This request expired")
    assert [b.text() for b in (dialog.cancel_button, dialog.accept_button) if b.isVisible()] == ["Close"]
    dialog.close()
