"""The Start build dialog on its own: keys that cancel, plain text, the input guard, expiry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.context import ExtensionFrame
from broker.orchestrate.builds import BuildAnswer, BuildPlan, BuildQuestion
from tests.ui.samples import summary
from ui.dialogs.build import BuildDialog, DialogBuildAsker
from ui.qt import QFormLayout, QKeySequence, QLabel, QPlainTextEdit, Qt

WHO = ExtensionFrame("ws", "com.example.board", "i1", "Task <b>board</b>")
PLAN = BuildPlan(WHO, "claude", "site", Path("/work/site"), "Build <i>T-1</i>\n\u202eevil", True)


def ready(qtbot: QtBot, dialog: BuildDialog) -> BuildDialog:
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.guard.release()
    return dialog


@pytest.mark.parametrize("key", [Qt.Key.Key_Escape, Qt.Key.Key_Return], ids=["escape", "enter"])
def test_escape_and_enter_cancel_even_with_a_write_beside_the_build(qtbot: QtBot, key: Qt.Key) -> None:
    dialog = ready(qtbot, BuildDialog(BuildQuestion(PLAN, summary("files"), "Move")))
    assert dialog.focusWidget() is dialog.cancel_button
    assert not any(
        b.isDefault() for b in (dialog.accept_button, dialog.write_button, dialog.both_button) if b
    )
    with qtbot.waitSignal(dialog.decided, timeout=2000):
        qtbot.keyClick(dialog.focusWidget(), key)
    assert dialog.answer is BuildAnswer.CANCEL


def test_everything_the_tool_gives_is_shown_as_plain_text(qtbot: QtBot) -> None:
    dialog = ready(qtbot, BuildDialog(BuildQuestion(PLAN)))
    labels = [w.text() for w in dialog.findChildren(QLabel)]
    assert "Task <b>board</b> (com.example.board) wants to start a build." in labels
    assert all(
        w.textFormat() == Qt.TextFormat.PlainText for w in dialog.findChildren(QLabel) if "<b>" in w.text()
    )
    assert "Build <i>T-1</i>\n[U+202E]evil" in [w.toPlainText() for w in dialog.findChildren(QPlainTextEdit)]


def test_a_click_already_on_its_way_when_the_dialog_appears_is_dropped(qtbot: QtBot) -> None:
    dialog = BuildDialog(BuildQuestion(PLAN, summary("files"), "Move"), guard_ms=60_000)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.both_button is not None
    qtbot.mouseClick(dialog.both_button, Qt.MouseButton.LeftButton)
    assert dialog.answer is None and dialog.isVisible()


def test_a_write_whose_token_runs_out_with_the_dialog_open_expires(qtbot: QtBot, run: Any) -> None:
    asker = DialogBuildAsker(margin=0.0, guard_ms=0)
    answer = run(asker(BuildQuestion(PLAN, summary("files", expires_in=0.05), "Move")))
    assert answer is BuildAnswer.EXPIRED
    (dialog,) = asker.open_dialogs  # it stays open to say so
    assert dialog.notice.text().startswith("This request expired") and not dialog.accept_button.isVisible()
    dialog.close()


def test_an_ampersand_in_the_tools_label_is_shown_and_makes_no_shortcut(qtbot: QtBot) -> None:
    dialog = ready(qtbot, BuildDialog(BuildQuestion(PLAN, summary("files"), "R&D")))
    for button in (dialog.write_button, dialog.both_button):
        assert button is not None
        assert QKeySequence.mnemonic(button.text()).isEmpty()
        assert button.text().replace("&&", "&").startswith("R&D")


@pytest.mark.parametrize("beside", [False, True], ids=["build", "build-and-write"])
def test_each_field_is_one_line_level_with_its_label(qtbot: QtBot, beside: bool) -> None:
    question = BuildQuestion(PLAN, summary("files"), "Move") if beside else BuildQuestion(PLAN)
    dialog = ready(qtbot, BuildDialog(question))
    line = dialog.fontMetrics().lineSpacing()
    rows = 0
    for form in dialog.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            if label is None or field is None or not isinstance(field.widget(), QLabel):
                continue
            rows += 1
            name, value = label.widget(), field.widget()
            assert value.height() < 2 * line, value.text()
            level = abs(name.geometry().center().y() - value.geometry().center().y())
            assert level <= line // 2, value.text()
    assert rows >= 5
