"""Plugin review: every connection, writes apart and marked, the MCP warning, Cancel first."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.kinds.mcp.rules import REVIEW_WARNING
from broker.manifest import Manifest, Review, validate
from broker.summary import Decision
from tests.ui.samples import BIDI, HTML, manifest_raw
from ui.dialogs.base import answer
from ui.dialogs.review import ReviewDialog, ReviewReason
from ui.qt import QGroupBox, QLabel, QPlainTextEdit, Qt


def review_of(raw: dict[str, Any]) -> Review:
    assert validate(raw) == []
    return Manifest(raw, Path("/nonexistent")).review()


def dialog_for(
    qtbot: QtBot, raw: dict[str, Any], reason: ReviewReason = ReviewReason.INSTALL
) -> ReviewDialog:
    dialog = ReviewDialog(review_of(raw), reason)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def labels(widget: Any) -> list[str]:
    return [w.text() for w in widget.findChildren(QLabel)] + [
        w.toPlainText() for w in widget.findChildren(QPlainTextEdit)
    ]


def test_review_groups_everything_by_connection(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, manifest_raw())
    boxes = {b.objectName(): b for b in dialog.findChildren(QGroupBox)}
    assert {"connection:gh", "connection:tools", "connection:app", "writes"} <= set(boxes)
    gh = labels(boxes["connection:gh"])
    assert "issues: GET /repos/{owner}/{repo}/issues" in gh
    assert "close: PATCH /repos/{owner}/{repo}/issues/{number}" in gh
    assert any("SELECT id, title FROM tickets" in t for t in labels(boxes["connection:app"]))
    assert "Board 1.2.0 (com.example.board)" in labels(dialog)


def test_the_review_names_the_extension_by_its_id_beside_its_name(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, manifest_raw(name="Helm (built-in) system update", version="99.0.0"))
    assert dialog.windowTitle() == "Review Helm (built-in) system update (com.example.board)"
    assert "Helm (built-in) system update 99.0.0 (com.example.board)" in labels(dialog)


def test_writes_are_listed_separately_and_marked(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, manifest_raw())
    writes = labels(dialog.findChild(QGroupBox, "writes"))
    assert "[gh] close: PATCH /repos/{owner}/{repo}/issues/{number}" in writes
    assert "[tools] tool create_issue" in writes
    assert not any("issues: GET" in t for t in writes)
    assert "WRITE" in labels(dialog.findChild(QGroupBox, "connection:gh"))


def test_the_mcp_warning_is_shown_with_its_connection(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, manifest_raw())
    tools = dialog.findChild(QGroupBox, "connection:tools")
    assert "⚠ " + REVIEW_WARNING in labels(tools)
    assert not any(REVIEW_WARNING in t for t in labels(dialog.findChild(QGroupBox, "connection:gh")))


def test_a_changed_extension_says_it_needs_approval_again(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, manifest_raw(), ReviewReason.CHANGED)
    assert any("changed since you approved it" in t for t in labels(dialog))


def test_changed_tool_definitions_are_listed_as_plain_text(qtbot: QtBot) -> None:
    change = f"[tools] tool list_issues: description changed to {HTML}"
    dialog = ReviewDialog(review_of(manifest_raw()), ReviewReason.CHANGED, changes=[change])
    qtbot.addWidget(dialog)
    box = dialog.findChild(QLabel, "pin-changes")
    assert box is not None
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert change in box.text()
    assert dialog_for(qtbot, manifest_raw()).findChild(QLabel, "pin-changes") is None


def test_cancel_is_the_default_and_escape_declines(qtbot: QtBot) -> None:
    dialog = dialog_for(qtbot, manifest_raw())
    assert dialog.focusWidget() is dialog.cancel_button
    assert dialog.cancel_button.isDefault()
    assert not dialog.accept_button.autoDefault()
    assert dialog.accept_button.text() == "Approve"
    dialog.guard.release()
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert blocker.args == [Decision.DECLINED]


def test_hostile_names_and_details_are_plain_text(qtbot: QtBot) -> None:
    raw = manifest_raw(name=HTML + BIDI)
    raw["connections"][2]["queries"]["recent"]["sql"] = "SELECT '" + HTML + "' LIMIT ? -- " + BIDI  # type: ignore[index]
    dialog = dialog_for(qtbot, raw)
    for label in dialog.findChildren(QLabel):
        assert "\u202e" not in label.text()
        if "<" in label.text():
            assert label.textFormat() == Qt.TextFormat.PlainText
    assert any(t.startswith(HTML + "invoice[U+202E]") for t in labels(dialog))


def test_approving_through_the_awaitable_answer(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, run: Any
) -> None:
    dialog = ReviewDialog(review_of(manifest_raw()), guard_ms=0)
    qtbot.addWidget(dialog)
    task = qloop.create_task(answer(dialog))
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)

    async def result() -> Decision:
        return await task

    assert run(result(), 5) is Decision.CONFIRMED


def test_tools_pinned_at_first_contact_are_shown_with_their_moment(qtbot: QtBot) -> None:
    note = "[tools] tools pinned at first contact on 2026-03-01T10:00:00+00:00 (trust on first use)"
    dialog = ReviewDialog(review_of(manifest_raw()), ReviewReason.CHANGED, pinning=[note])
    qtbot.addWidget(dialog)
    box = dialog.findChild(QLabel, "pinning")
    assert box is not None
    assert note in box.text()
    assert box.textFormat() == Qt.TextFormat.PlainText


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085", "\u200b", "\u3164"])
def test_line_separators_and_invisible_characters_in_a_manifest_are_shown(
    qtbot: QtBot, separator: str
) -> None:
    raw = manifest_raw(name=f"Board{separator}Approved by Helm")
    dialog = dialog_for(qtbot, raw)
    shown = f"Board[U+{ord(separator):04X}]Approved by Helm"
    assert any(shown in text for text in labels(dialog))
    assert not any(separator in text for text in labels(dialog))


def test_review_shows_the_build_template_and_where_it_runs(qtbot: QtBot) -> None:
    raw = manifest_raw()
    raw.update(
        kind="tool",
        permissions={**raw.get("permissions", {}), "orchestrate": True},
        orchestrate={"prompt": "Implement task {task} of {project}", "root": "project", "write": True},
    )
    dialog = dialog_for(qtbot, raw)
    (box,) = [b for b in dialog.findChildren(QGroupBox) if b.objectName() == "orchestrate"]
    shown = labels(box)
    assert "Implement task {task} of {project}" in shown
    assert "the project the tool names (input.project)" in shown
    assert "yes, each change confirmed" in shown
