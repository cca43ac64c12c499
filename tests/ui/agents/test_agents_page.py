"""The Agents page against the real broker and the scripted ACP agent: transcript, questions,
writes, cancel and past sessions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from tests.ui.agents.kit import (
    ask,
    finished,
    loading_agent,
    own_page,
    page,
    question,
    said,
    send,
    setup,
    until_text,
)
from tests.unit.agents.agent_setup import Setup
from tests.unit.agents.test_agent_lifecycle import live_in_group, until
from ui.agents.page import AgentsPage
from ui.dialogs.agent_permission import PermissionDialog
from ui.dialogs.confirm import ConfirmDialog
from ui.qt import QLabel, QPlainTextEdit, Qt

__all__ = ["page", "setup"]


def test_a_turn_streams_messages_thoughts_tool_calls_and_the_plan_as_plain_text(
    page: AgentsPage, run: Any
) -> None:
    steps = [
        {"think": "look at <b>the tests</b>"},
        {"say": "Hello \u202eevil.exe <i>there</i>"},
        {"tool": {"id": "t1", "title": "Run tests", "kind": "execute", "status": "in_progress"}},
        {"plan": [["Read code", "high", "completed"], ["Fix <bug>", "medium", "in_progress"]]},
        {"tool_update": {"id": "t1", "status": "completed"}},
        {"plan": [["Read code", "high", "completed"], ["Fix <bug>", "medium", "completed"]]},
    ]
    send(page, steps)
    text = run(finished(page))
    assert "look at <b>the tests</b>" in text
    assert "Hello [U+202E]evil.exe <i>there</i>" in text
    # The tool call and the plan changed in place: one line each, as last reported.
    assert said(text, "Tool call:") == ["Tool call: Run tests  [execute · done]"]
    assert text.count("Plan:") == 1
    assert "[x] Fix <bug>" in text
    assert said(text, "Session started: scripted in ws")
    assert text.rstrip().endswith("The agent ended its turn.")
    assert page.past.list.count() == 1


def test_the_next_prompt_continues_the_session_until_the_choices_change(page: AgentsPage, run: Any) -> None:
    send(page, [{"say": "one"}])
    run(finished(page))
    first = page.session
    send(page, [{"say": "two"}])
    text = run(finished(page))
    assert page.session is first
    page.picker.write.setChecked(True)
    send(page, [{"say": "three"}])
    text = run(finished(page))
    assert page.session is not first
    assert len(said(text, "Session started")) == 2
    assert "New session: scripted in ws" in text
    assert page.past.list.count() == 2


def choose(dialog: PermissionDialog, how: str, qtbot: QtBot) -> None:
    if how in ("once", "always"):
        qtbot.mouseClick(dialog.allow_buttons[how], Qt.MouseButton.LeftButton)
    elif how == "cancel":
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    elif how == "escape":
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    else:
        dialog.close()


@pytest.mark.parametrize(
    ("how", "agent_heard", "decision"),
    [
        pytest.param("once", "permission: selected once", "allowed by you", id="allow"),
        pytest.param("always", "permission: selected once", "allowed by you — always", id="allow-always"),
        pytest.param("cancel", "permission: selected no", "refused;", id="cancel"),
        pytest.param("escape", "permission: selected no", "refused;", id="escape"),
        pytest.param("closed", "permission: selected no", "refused;", id="closed"),
    ],
)
def test_an_ask_verdict_shows_helms_dialog_and_the_answer_reaches_the_agent(
    page: AgentsPage, run: Any, qtbot: QtBot, how: str, agent_heard: str, decision: str
) -> None:
    send(page, [ask("Run <b>make</b>", content="make test\u202e")])

    async def answer() -> PermissionDialog:
        dialog = await question(page)
        assert isinstance(dialog, PermissionDialog)
        assert dialog.focusWidget() is dialog.cancel_button and dialog.cancel_button.isDefault()
        choose(dialog, how, qtbot)
        await finished(page)
        return dialog

    dialog = run(answer())
    assert dialog.question.title == "Run <b>make</b>"
    assert dialog.question.kind == "execute"
    text = page.transcript.toPlainText()
    assert agent_heard in text
    assert said(text, "Permission: Run <b>make</b> [execute] — " + decision)
    assert page.questions.dialog is None


def test_an_edit_question_shows_its_diff_and_every_option_the_agent_offered(
    page: AgentsPage, setup: Setup, run: Any
) -> None:
    path = str(setup.root / "login.py")
    diff = {"path": path, "old_text": "limit = 15\n", "new_text": "limit = 15 * 60\n"}
    page.picker.write.setChecked(True)
    send(page, [ask("Edit login.py", "edit", diff=diff, locations=[path])])

    async def look() -> list[str]:
        dialog = await question(page)
        boxes = [box.toPlainText() for box in dialog.findChildren(QPlainTextEdit)]
        dialog.reject()
        await finished(page)
        return boxes

    boxes = run(look())
    assert any("-limit = 15\n+limit = 15 * 60" in box for box in boxes)
    assert "Yes — allows once\nAlways — allows always\nNo — refuses once" in boxes
    assert "permission: selected no" in page.transcript.toPlainText()


def test_a_write_confirmed_in_the_write_dialog_is_written_and_a_declined_one_is_not(
    page: AgentsPage, setup: Setup, run: Any, qtbot: QtBot
) -> None:
    target = setup.root / "notes.md"
    target.write_text("old line\n")
    page.picker.write.setChecked(True)

    async def write(content: str, button: str) -> tuple[str, str]:
        send(page, [{"write": str(target), "content": content}])
        dialog = await question(page)
        assert isinstance(dialog, ConfirmDialog)
        assert dialog.focusWidget() is dialog.cancel_button
        assert dialog.diff_box is not None
        shown = (dialog.windowTitle(), dialog.diff_box.toPlainText())
        words = [label.text() for label in dialog.findChildren(QLabel)]
        assert dialog.findChild(QLabel, "heading").text() == "Agent scripted wants to change a file."
        assert "Change — exactly as Helm will send it" in words  # the one dialog every write uses
        assert "Nothing is sent unless you click Confirm." in words
        qtbot.mouseClick(getattr(dialog, button), Qt.MouseButton.LeftButton)
        await finished(page)
        return shown

    title, diff = run(write("new line\n", "accept_button"))
    assert title == "Confirm file change"
    assert "-old line\n+new line" in diff
    assert target.read_text() == "new line\n"
    run(write("another\n", "cancel_button"))
    assert target.read_text() == "new line\n"
    text = page.transcript.toPlainText()
    assert "write ok" in text
    assert "write error: the user did not confirm the change" in text
    assert said(text, f"Wrote {target} (you confirmed)")
    assert said(text, f"Not written: {target} — refused")


def test_cancel_during_a_turn_ends_the_agents_whole_group(page: AgentsPage, run: Any) -> None:
    send(page, [{"pid": 1}, {"hang": {"child": True}}])

    async def cancel() -> str:
        await until_text(page, "child ")
        assert page.cancel_button.isEnabled()
        page.cancel_button.click()
        return await finished(page)

    text = run(cancel())
    match = re.search(r"pgid (\d+)", text)
    assert match is not None
    pgid = int(match[1])
    assert "The agent failed: the agent did not stop after cancel; Helm ended it" in text
    run(until(lambda: live_in_group(pgid) == []))
    assert page.session is None  # the next prompt starts a new session
    assert page.send_button.isEnabled() is False and page.picker.isEnabled()


def test_cancel_closes_an_open_question_and_refuses_it(page: AgentsPage, run: Any) -> None:
    send(page, [ask()])

    async def cancel() -> tuple[list[int], str]:
        dialog = await question(page)
        closed: list[int] = []
        dialog.finished.connect(closed.append)
        page.cancel_button.click()
        return closed, await finished(page)

    closed, text = run(cancel())
    assert closed  # the dialog went away with the turn
    assert page.questions.dialog is None
    assert "permission: selected no" in text
    assert said(text, "Permission: Run the tests [execute] — refused")


def test_a_past_session_is_listed_and_resumed(tmp_path: Path, setup: Setup, qtbot: QtBot, run: Any) -> None:
    loading_agent(setup, tmp_path)
    with own_page(qtbot, setup, run) as page:
        send(page, [{"say": "remember me"}])
        first = run(finished(page))
        session_id = first.split("(session ")[1].split(")")[0]
        page.new_button.click()
        assert page.transcript.toPlainText() == ""
        assert page.past.list.count() == 1
        item = page.past.list.item(0)
        assert item is not None and item.text().startswith('[{"say": "remember me"}]\n')
        page.past.list.setCurrentItem(item)
        page.past.resume_button.click()
        assert "Your next prompt continues the session" in page.transcript.toPlainText()
        send(page, [{"say": "back"}])
        text = run(finished(page))
    assert f"Session continued: scripted in ws (session {session_id})" in text
    assert f"history of {session_id}" in text
    # The replayed history comes first, then the new prompt and its answer.
    assert text.index(f"history of {session_id}") < text.index("You: ") < text.index("\nback\n")


def test_a_wrong_profile_is_reported_and_nothing_runs(page: AgentsPage, setup: Setup, run: Any) -> None:
    with setup.home.update() as settings:
        settings.agents["scripted"]["key_env"] = "AGENT_KEY"  # a key variable, but no key stored
    send(page, [{"say": "hi"}])
    run(finished(page))
    assert "the key of agent 'scripted' is missing" in page.status.text()
    assert page.session is None
    assert page.prompt.toPlainText() == '[{"say": "hi"}]'  # kept, to send again once fixed


def test_a_past_session_the_agent_cannot_load_any_more_starts_a_new_one_and_says_why(
    tmp_path: Path, setup: Setup, qtbot: QtBot, run: Any
) -> None:
    state = loading_agent(setup, tmp_path)
    with own_page(qtbot, setup, run) as page:
        send(page, [{"say": "remember me"}])
        run(finished(page))
        for kept in state.iterdir():  # the agent forgot the session
            kept.unlink()
        page.past.list.setCurrentItem(page.past.list.item(0))
        page.past.resume_button.click()
        send(page, [{"say": "back"}])
        text = run(finished(page))
    started = said(text, "Session started: scripted in ws (session ")
    assert len(started) == 1
    note = said(text, "The past session could not be loaded")
    assert len(note) == 1 and note[0].endswith("; a new session was started.")
    assert text.index(started[0]) < text.index(note[0]) < text.index("You: ") < text.index("\nback\n")
