"""The audit view of write decisions."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from broker.audit import AuditLog, AuditRecord
from tests.ui.samples import HTML
from ui.audit_view import AuditView


def record(decision: str, time: str, title: str = "Confirm request") -> AuditRecord:
    return AuditRecord("ws", "com.example.test", "gh", "http", "close", decision, "ok", title, "d" * 64, time)


def column(view: AuditView, c: int) -> list[str]:
    return [view.table.item(r, c).text() for r in range(view.table.rowCount())]


def test_decisions_are_listed_newest_first_and_can_be_filtered(qtbot: QtBot, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(record("confirmed", "2026-01-01T10:00:00+00:00"))
    log.record(record("declined", "2026-01-02T10:00:00+00:00"))
    log.record(record("expired", "2026-01-03T10:00:00+00:00", HTML))
    view = AuditView(log)
    qtbot.addWidget(view)
    assert column(view, 1) == ["expired", "declined", "confirmed"]
    assert column(view, 8)[0] == HTML
    view.filter.setCurrentText("declined")
    assert column(view, 1) == ["declined"]
    assert view.count.text() == "1 decision(s)"


def test_refresh_picks_up_new_decisions(qtbot: QtBot, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    view = AuditView(log)
    qtbot.addWidget(view)
    assert view.table.rowCount() == 0
    log.record(record("confirmed", "2026-01-01T10:00:00+00:00"))
    view.refresh_button.click()
    assert column(view, 1) == ["confirmed"]
