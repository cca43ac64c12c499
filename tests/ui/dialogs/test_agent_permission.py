"""The permission dialog of a coding agent's tool call, and the questions of one session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.agents import Option, PermissionQuestion
from broker.summary import Decision
from tests.ui.agents.kit import next_emit
from tests.ui.samples import BIDI, DIFF, HTML
from ui.agents.questions import AgentQuestions
from ui.dialogs.agent_permission import PermissionDialog
from ui.qt import QLabel, QPlainTextEdit, QPushButton, Qt, QWidget

OPTIONS = (
    Option("once", "Yes", "allow_once"),
    Option("always", "Always", "allow_always"),
    Option("no", "No", "reject_once"),
)


def question(
    title: str = "Run the tests", options: tuple[Option, ...] = OPTIONS, **extra: Any
) -> PermissionQuestion:
    fields = {"content": "make test", "diff": "", **extra}
    return PermissionQuestion("d1", "claude", "ws", title, "execute", options=options, **fields)


def shown(qtbot: QtBot, dialog: PermissionDialog) -> PermissionDialog:
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def texts(dialog: PermissionDialog) -> list[str]:
    return [w.text() for w in dialog.findChildren(QLabel)] + [
        w.toPlainText() for w in dialog.findChildren(QPlainTextEdit)
    ]


def test_it_shows_the_title_kind_content_diff_and_every_offered_option(qtbot: QtBot) -> None:
    dialog = shown(qtbot, PermissionDialog(question("Edit a.py", diff=DIFF), guard_ms=0))
    everything = texts(dialog)
    assert "Edit a.py" in everything
    assert "execute" in everything
    assert "make test" in everything
    assert any("-old line" in t and "+new line" in t for t in everything)
    assert "Yes — allows once\nAlways — allows always\nNo — refuses once" in everything
    assert any("answered with its option “No”" in t for t in everything)


def test_cancel_has_the_focus_and_is_the_default_and_enter_refuses(qtbot: QtBot) -> None:
    dialog = shown(qtbot, PermissionDialog(question(), guard_ms=0))
    assert dialog.focusWidget() is dialog.cancel_button
    assert dialog.cancel_button.isDefault()
    allows = list(dialog.allow_buttons.values())
    assert not any(b.isDefault() or b.autoDefault() for b in allows)
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
    assert blocker.args == [Decision.DECLINED]
    assert dialog.picked is None


@pytest.mark.parametrize("option_id", ["once", "always"])
def test_each_allow_button_answers_its_own_option(qtbot: QtBot, option_id: str) -> None:
    dialog = shown(qtbot, PermissionDialog(question(), guard_ms=0))
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        qtbot.mouseClick(dialog.allow_buttons[option_id], Qt.MouseButton.LeftButton)
    assert blocker.args == [Decision.CONFIRMED]
    assert dialog.picked == option_id


def test_closing_the_window_refuses(qtbot: QtBot) -> None:
    dialog = shown(qtbot, PermissionDialog(question(), guard_ms=0))
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        dialog.close()
    assert blocker.args == [Decision.DECLINED]
    assert dialog.picked is None


def test_buttons_say_what_they_do_in_helms_words_not_the_agents(qtbot: QtBot) -> None:
    options = (
        Option("a", "Cancel", "allow_once"),
        Option("b", "<b>Deny</b>", "allow_once"),
        Option("c", "Refuse", "allow_always"),
    )
    dialog = shown(qtbot, PermissionDialog(question(options=options), guard_ms=0))
    labels = {i: b.text() for i, b in dialog.allow_buttons.items()}
    assert labels == {
        "a": "Allow once (Cancel)",
        "b": "Allow once (<b>Deny</b>)",
        "c": "Allow always for this session",
    }
    assert [b.text() for b in dialog.findChildren(QPushButton)].count("Cancel") == 1


@pytest.mark.parametrize(
    ("hostile", "shown_as"),
    [pytest.param(HTML, HTML, id="html"), pytest.param(BIDI, "invoice[U+202E]gpj.exe", id="bidi")],
)
def test_hostile_strings_are_shown_as_plain_characters(qtbot: QtBot, hostile: str, shown_as: str) -> None:
    options = (Option("once", hostile, "allow_once"), Option("no", hostile, "reject_once"))
    dialog = shown(qtbot, PermissionDialog(question(hostile, options, content=hostile), guard_ms=0))
    labels = dialog.findChildren(QLabel)
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels if "<" in label.text())
    assert any(label.text() == shown_as for label in labels)
    assert any(box.toPlainText() == shown_as for box in dialog.findChildren(QPlainTextEdit))
    assert all("\u202e" not in t for t in texts(dialog))
    tip = dialog.allow_buttons["once"].toolTip()  # Qt would guess a tag-like tooltip is rich text
    assert "<b>" not in tip and "<script>" not in tip


def test_a_click_already_on_its_way_when_the_dialog_appears_is_ignored(qtbot: QtBot) -> None:
    dialog = shown(qtbot, PermissionDialog(question(), guard_ms=60_000))
    for button in dialog.allow_buttons.values():
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert dialog.decision is None
    assert dialog.isVisible()


def test_a_session_asks_one_question_at_a_time(qtbot: QtBot, run: Any) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    questions = AgentQuestions(parent, guard_ms=0)

    def open_dialogs() -> list[PermissionDialog]:
        return [w for w in parent.findChildren(PermissionDialog) if w.isVisible()]

    async def ask_two() -> tuple[str | None, str | None]:
        first = asyncio.ensure_future(questions.permission(question("first")))
        second = asyncio.ensure_future(questions.permission(question("second")))
        dialog = await next_emit(questions.opened)
        assert [d.question.title for d in open_dialogs()] == ["first"]
        dialog.allow_buttons["once"].click()
        dialog = await next_emit(questions.opened)
        assert [d.question.title for d in open_dialogs()] == ["second"]
        dialog.close()
        return await first, await second

    assert run(ask_two()) == ("once", None)
