"""The audit log window on real write decisions: local times, filters and a detail pane that
shows what the dialog showed — title, field labels, digest — and never an argument value."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from broker import Broker, CallContext, Decision
from broker.audit import AuditLog, AuditRecord
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension
from tests.ui.samples import HTML
from ui.audit_view import AuditView
from ui.qt import QLabel
from ui.when import local_time_of

FILES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["*.md"],
    "operations": ["read", "write"],
}
PRIVATE_TEXT = "my private diary entry 5d2a"
PRIVATE_PATH = "diary-5d2a.md"


def column(view: AuditView, c: int) -> list[str]:
    return [view.table.item(r, c).text() for r in range(view.table.rowCount())]


async def decided(tmp_path: Path) -> tuple[Broker, CallContext]:
    """Two real writes through the broker: one confirmed, one declined; and another extension's."""
    broker = new_broker(tmp_path / "home")
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES], write=True))
    (tmp_path / "root" / PRIVATE_PATH).write_text("old\n", encoding="utf-8")
    args = {
        "path": PRIVATE_PATH,
        "text": PRIVATE_TEXT,
        "expected_sha256": hashlib.sha256(b"old\n").hexdigest(),
    }
    assert (await broker.request(ctx, "notes", "write", args, ScriptedConfirmer(Decision.DECLINED)))[
        "ok"
    ] is False
    assert (await broker.request(ctx, "notes", "write", args, ScriptedConfirmer()))["ok"] is True
    other = manifest_dict([FILES], write=True, id="com.example.other", name="Other")
    octx = await setup_extension(broker, tmp_path, other)
    args = {"path": PRIVATE_PATH, "text": "x", "expected_sha256": "0" * 64}
    assert (await broker.request(octx, "notes", "write", args, ScriptedConfirmer()))["ok"] is False
    return broker, ctx


def test_decisions_show_local_times_newest_first_and_filter_by_decision_extension_and_outcome(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker, _ctx = run(decided(tmp_path))
    view = AuditView(broker.audit)
    qtbot.addWidget(view)
    records = sorted(broker.audit.records(), key=lambda r: r.time, reverse=True)
    assert column(view, 0) == [local_time_of(r.time) for r in records]
    assert "T" not in column(view, 0)[0] and "+00:00" not in column(view, 0)[0]
    assert view.table.item(0, 0).toolTip() == records[0].time  # the exact time stays at hand
    view.filter.setCurrentText("declined")
    assert column(view, 1) == ["declined"]
    view.filter.setCurrentIndex(0)
    view.extension_filter.setCurrentIndex(view.extension_filter.findData("com.example.other"))
    assert column(view, 3) == ["com.example.other"] * 2
    assert sorted(column(view, 2)) == ["conflict", "sending"]  # the decision before, the outcome after
    view.extension_filter.setCurrentIndex(0)
    view.outcome_filter.setCurrentIndex(view.outcome_filter.findData("ok"))
    assert column(view, 1) == ["confirmed"]
    assert view.count.text() == "1 decision(s)"
    run(broker.aclose())


def detail_texts(view: AuditView) -> dict[str, str]:
    form = view.detail_form
    out = {}
    for row in range(form.rowCount()):
        label = form.itemAt(row, form.ItemRole.LabelRole)
        field = form.itemAt(row, form.ItemRole.FieldRole)
        if label is not None and field is not None and isinstance(field.widget(), QLabel):
            out[label.widget().text()] = field.widget().text()  # type: ignore[union-attr]
    return out


def test_the_detail_pane_shows_what_the_dialog_showed_and_which_file_but_no_argument_value(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker, ctx = run(decided(tmp_path))
    view = AuditView(broker.audit)
    qtbot.addWidget(view)
    view.show()
    view.outcome_filter.setCurrentIndex(view.outcome_filter.findData("ok"))
    view.table.setCurrentCell(0, 0)
    shown = detail_texts(view)
    record = next(r for r in broker.audit.records() if r.outcome == "ok")
    assert shown["Dialog title"] == "Confirm file change"
    assert shown["Fields shown"].startswith("Workspace, Path — values are not kept")
    assert shown["Request digest"] == record.request_digest and len(record.request_digest) == 64
    assert shown["Extension"] == ctx.extension
    assert shown["Asked by"] == f"extension {ctx.extension}"
    assert shown["Connection"] == "notes (files)"
    everything = " ".join(w.text() for w in view.findChildren(QLabel))
    assert PRIVATE_TEXT not in everything
    assert PRIVATE_TEXT not in broker.audit.path.read_text("utf-8")
    # Which file a write changed is recorded (and shown) as its own field, never its content.
    assert shown["File"] == f"ws/{PRIVATE_PATH}"
    run(broker.aclose())


def test_text_from_a_record_is_shown_as_text_and_refresh_picks_up_new_decisions(
    qtbot: QtBot, tmp_path: Path
) -> None:
    broker = new_broker(tmp_path / "home")
    view = AuditView(broker.audit)
    qtbot.addWidget(view)
    assert view.table.rowCount() == 0
    broker.audit.record(
        AuditRecord("ws", "com.example.test", "gh", "http", "close", "confirmed", "ok", HTML, "d" * 64,
                    "2026-01-01T10:00:00+00:00", fields=("Service", "URL"))
    )  # fmt: skip
    view.refresh_button.click()
    assert column(view, 1) == ["confirmed"]
    assert column(view, 6) == [HTML]
    view.table.setCurrentCell(0, 0)
    assert detail_texts(view)["Dialog title"] == HTML
    assert all(w.textFormat().name == "PlainText" for w in view.findChildren(QLabel) if w.text() == HTML)


def test_lines_that_cannot_be_read_are_skipped_and_counted_beside_the_decisions(
    qtbot: QtBot, tmp_path: Path
) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(AuditRecord("ws", "com.example.test", "gh", "http", "close", "confirmed", "ok", "Close"))
    with log.path.open("ab") as fh:
        fh.write(b'{"title": "torn inside \xc3\nnull\n')
    log.record(
        AuditRecord("ws", "com.example.test", "gh", "http", "open", "declined", "nothing sent", "Open")
    )
    view = AuditView(log)
    qtbot.addWidget(view)
    assert sorted(column(view, 1)) == ["confirmed", "declined"]
    assert view.count.text() == (
        f"2 decision(s) — 2 line(s) of {log.path} could not be read and were skipped"
    )


def test_the_window_says_where_records_are_exported_and_that_a_sink_is_down_with_what_waits(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from broker import teams

    broker = new_broker(tmp_path / "home")
    share = tmp_path / "unmounted"
    teams.add_sink(broker.home, "share", {"type": "jsonl", "path": str(share / "helm.jsonl")})
    view = AuditView(broker.audit, export=broker.export.status)
    qtbot.addWidget(view)
    assert view.export_line.isHidden() is False
    broker.audit.record(
        AuditRecord("ws", "com.example.test", "gh", "http", "close", "refused", "nothing sent",
                    point_verdict="DENY", point_decision_id="dec-9", point_receipt_id="rcpt-9")
    )  # fmt: skip
    qtbot.waitUntil(lambda: broker.export.status()[0].state == "down", timeout=10_000)
    view.refresh_button.click()
    line = view.export_line.text()
    assert f"sink share: JSON Lines file {share / 'helm.jsonl'} — down" in line
    assert "1 record(s) waiting" in line
    view.table.setCurrentCell(0, 0)
    shown = detail_texts(view)
    assert (shown["Decision point"], shown["Its decision id"], shown["Its receipt id"]) == (
        "DENY",
        "dec-9",
        "rcpt-9",
    )
    broker.export.close(0.1)


def test_the_export_line_is_hidden_when_nothing_is_exported(qtbot: QtBot, tmp_path: Path) -> None:
    broker = new_broker(tmp_path / "home")
    view = AuditView(broker.audit, export=broker.export.status)
    qtbot.addWidget(view)
    assert view.export_line.isHidden()
