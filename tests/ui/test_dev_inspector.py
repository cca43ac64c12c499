"""The call inspector of author mode shows a call's hints beside its result."""

from __future__ import annotations

import json

from pytestqt.qtbot import QtBot

from ui.dev import CallRecord
from ui.dev.inspector import CallInspector

HINTS = (
    "query placeholder {limit} had no value: query parameter 'per_page' was not sent",
    "argument 'user' is not used by any placeholder of this call",
)


def record(hints: tuple[str, ...]) -> CallRecord:
    return CallRecord(
        at="2026-01-02T03:04:05.678+00:00",
        instance="i",
        connection="api",
        operation="issues",
        args={"user": "me"},
        duration_ms=12.0,
        envelope={"ok": True, "data": [], "error": None},
        hints=hints,
    )


def test_a_call_with_hints_is_marked_and_its_hints_are_shown_in_full(qtbot: QtBot) -> None:
    inspector = CallInspector()
    qtbot.addWidget(inspector)
    inspector.add(record(()))
    inspector.add(record(HINTS))
    plain, hinted = (inspector.table.item(row, 5) for row in (0, 1))
    assert (plain.text(), plain.toolTip()) == ("ok", "")
    assert hinted.text() == "ok ⚠ 2 hint(s)"
    assert hinted.toolTip() == "\n".join(HINTS)
    inspector.select(1)
    assert json.loads(inspector.detail.toPlainText())["hints"] == list(HINTS)
