"""The write confirmation dialog and the confirmer that awaits it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.context import AgentRequester, AppInstance, ExtensionFrame, HelmItself, Requester
from broker.summary import Decision, WriteSummary
from tests.ui.samples import BIDI, DIFF, HTML, LONG, summary
from ui.dialogs.confirm import ConfirmDialog, DialogConfirmer
from ui.qt import QFormLayout, QLabel, QLineEdit, QPlainTextEdit, Qt


def shown(qtbot: QtBot, dialog: ConfirmDialog) -> ConfirmDialog:
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def ready(qtbot: QtBot, dialog: ConfirmDialog) -> ConfirmDialog:
    """Shown, with the input guard over."""
    shown(qtbot, dialog)
    dialog.guard.release()
    return dialog


def texts(dialog: ConfirmDialog) -> list[str]:
    return [w.text() for w in dialog.findChildren(QLabel)] + [
        w.toPlainText() for w in dialog.findChildren(QPlainTextEdit)
    ]


@pytest.mark.parametrize(
    ("kind", "title", "expected"),
    [
        pytest.param("db", "Confirm database write", ["close", "local-app"], id="db"),
        pytest.param(
            "http",
            "Confirm request",
            ["github", "PATCH", "https://api.github.com/repos/me/app/issues/7"],
            id="http",
        ),
        pytest.param("mcp", "Confirm tool call", ["github", "create_issue"], id="mcp"),
        pytest.param("files", "Confirm file change", ["app", "notes.md"], id="files"),
    ],
)
def test_each_kind_has_the_contract_title_and_shows_what_and_where(
    qtbot: QtBot, kind: str, title: str, expected: list[str]
) -> None:
    dialog = shown(qtbot, ConfirmDialog(summary(kind, request="EXACT REQUEST")))
    assert dialog.windowTitle() == title
    everything = texts(dialog)
    for value in [*expected, "EXACT REQUEST", "ws"]:
        assert value in everything
    assert any("Test extension (com.example.test)" in t for t in everything)


@pytest.mark.parametrize(
    ("who", "heading"),
    [
        pytest.param(
            ExtensionFrame("ws", "com.example.test", "w1", "Helm (built-in) system update"),
            "Helm (built-in) system update (com.example.test) wants to change a file.",
            id="extension",
        ),
        pytest.param(
            AppInstance("ws", "com.example.board", "i1", "Board"),
            "App Board (com.example.board) wants to change a file.",
            id="app",
        ),
        pytest.param(
            AgentRequester("ws", "claude", "s1"), "Agent claude wants to change a file.", id="agent"
        ),
        pytest.param(
            HelmItself("helm.db-explorer", "DB explorer"),
            "Helm's DB explorer (helm.db-explorer) wants to change a file.",
            id="helm",
        ),
    ],
)
def test_one_dialog_names_every_requester_by_its_id_beside_its_name(
    qtbot: QtBot, who: Requester, heading: str
) -> None:
    dialog = shown(qtbot, ConfirmDialog(replace(summary("files"), requester=who)))
    assert dialog.windowTitle() == "Confirm file change"
    assert heading in texts(dialog)
    assert "Nothing is sent unless you click Confirm." in texts(dialog)


def test_cancel_has_the_focus_and_is_the_default(qtbot: QtBot) -> None:
    dialog = shown(qtbot, ConfirmDialog(summary()))
    assert dialog.focusWidget() is dialog.cancel_button
    assert dialog.cancel_button.isDefault()
    assert not dialog.accept_button.isDefault()
    assert not dialog.accept_button.autoDefault()


def test_escape_declines(qtbot: QtBot) -> None:
    dialog = ready(qtbot, ConfirmDialog(summary()))
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert blocker.args == [Decision.DECLINED]


def test_enter_declines_because_cancel_is_the_default(qtbot: QtBot) -> None:
    dialog = ready(qtbot, ConfirmDialog(summary()))
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
    assert blocker.args == [Decision.DECLINED]


def test_confirm_button_confirms(qtbot: QtBot) -> None:
    dialog = ready(qtbot, ConfirmDialog(summary()))
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [Decision.CONFIRMED]


def test_clicks_and_keys_in_flight_when_the_dialog_appears_are_ignored(qtbot: QtBot) -> None:
    dialog = shown(qtbot, ConfirmDialog(summary(), guard_ms=60_000))
    assert dialog.guarded
    qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    qtbot.keyClick(dialog.accept_button, Qt.Key.Key_Space)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.decision is None
    assert dialog.isVisible()


def test_the_input_guard_ends_by_itself(qtbot: QtBot) -> None:
    dialog = shown(qtbot, ConfirmDialog(summary(), guard_ms=50))
    qtbot.waitUntil(lambda: not dialog.guarded, timeout=3000)
    with qtbot.waitSignal(dialog.decided, timeout=2000) as blocker:
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [Decision.CONFIRMED]


def test_a_token_expiring_while_open_answers_expired_and_says_so(qtbot: QtBot) -> None:
    dialog = ConfirmDialog(summary(), remaining=0.05)
    with qtbot.waitSignal(dialog.decided, timeout=3000) as blocker:
        shown(qtbot, dialog)
    assert blocker.args == [Decision.EXPIRED]
    assert dialog.isVisible()
    assert dialog.notice.isVisible()
    assert "expired" in dialog.notice.text()
    assert not dialog.accept_button.isVisible()
    assert dialog.cancel_button.text() == "Close"


@pytest.mark.parametrize(
    ("hostile", "shown_as"),
    [
        pytest.param(HTML, HTML, id="html"),
        pytest.param(BIDI, "invoice[U+202E]gpj.exe", id="bidi"),
    ],
)
def test_hostile_strings_are_shown_as_plain_characters(qtbot: QtBot, hostile: str, shown_as: str) -> None:
    s = summary("mcp", fields=(("MCP server", hostile), ("Tool", hostile)), request=hostile, name=hostile)
    dialog = shown(qtbot, ConfirmDialog(s))
    labels = dialog.findChildren(QLabel)
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels if "<" in label.text())
    assert any(label.text() == shown_as for label in labels)
    assert any(box.toPlainText() == shown_as for box in dialog.findChildren(QPlainTextEdit))
    assert all("\u202e" not in t for t in texts(dialog))


def test_very_long_text_scrolls_inside_a_box_of_bounded_size(qtbot: QtBot) -> None:
    s = summary("http", fields=(("URL", LONG),), request=LONG)
    dialog = shown(qtbot, ConfirmDialog(s))
    boxes = dialog.findChildren(QPlainTextEdit)
    assert [len(b.toPlainText()) for b in boxes] == [len(LONG)]  # the URL is the request's
    assert dialog.sizeHint().height() < 900
    assert dialog.sizeHint().width() < 1200


def test_a_short_value_sits_level_with_its_label(qtbot: QtBot) -> None:
    s = summary("http", fields=(("Service", HTML), ("Method", "POST"), ("URL", "https://x/" + "a" * 400)))
    dialog = shown(qtbot, ConfirmDialog(s))
    (form,) = dialog.findChildren(QFormLayout)
    rows = [
        (form.itemAt(row, QFormLayout.ItemRole.LabelRole), form.itemAt(row, QFormLayout.ItemRole.FieldRole))
        for row in range(form.rowCount())
    ]
    levels = {
        label.widget().text(): (value.geometry().top() - label.geometry().top(), value.geometry().height())
        for label, value in rows
        if isinstance(value.widget(), QLabel)
    }
    height = dialog.fontMetrics().height()
    assert levels == {"Workspace": (0, height), "Service": (0, height), "Method": (0, height)}


def test_the_file_diff_colours_added_and_removed_lines(qtbot: QtBot) -> None:
    dialog = shown(qtbot, ConfirmDialog(summary("files", diff=DIFF)))
    assert dialog.diff_box is not None
    doc = dialog.diff_box.document()
    colours: dict[str, Any] = {}
    block = doc.begin()
    while block.isValid():
        fragment = block.begin().fragment()
        colours[block.text()] = fragment.charFormat().foreground().color().name()
        block = block.next()
    assert colours["+new line"] == "#0a5d1a"
    assert colours["-old line"] == "#8a1111"
    assert colours[" line one"] != colours["+new line"]


# -- the confirmer -------------------------------------------------------------------------


async def outcome(task: asyncio.Future[Decision]) -> Decision:
    return await task


def open_dialog(qtbot: QtBot, confirmer: DialogConfirmer, count: int = 1) -> ConfirmDialog:
    qtbot.waitUntil(lambda: len(confirmer.open_dialogs) >= count, timeout=3000)
    dialog = confirmer.open_dialogs[count - 1]
    qtbot.waitExposed(dialog)
    dialog.guard.release()
    return dialog


def test_the_confirmer_returns_confirmed_on_confirm_and_declined_on_cancel(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, run: Any
) -> None:
    confirmer = DialogConfirmer()
    task = qloop.create_task(confirmer(summary()))
    qtbot.mouseClick(open_dialog(qtbot, confirmer).accept_button, Qt.MouseButton.LeftButton)
    assert run(outcome(task), 5) is Decision.CONFIRMED
    qtbot.waitUntil(lambda: not confirmer.open_dialogs, timeout=3000)
    task = qloop.create_task(confirmer(summary()))
    qtbot.keyClick(open_dialog(qtbot, confirmer), Qt.Key.Key_Escape)
    assert run(outcome(task), 5) is Decision.DECLINED


def test_one_dialog_at_a_time_per_extension_the_next_waits_its_turn(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, run: Any
) -> None:
    confirmer = DialogConfirmer()
    first = qloop.create_task(confirmer(summary(request="first")))
    second = qloop.create_task(confirmer(summary(request="second")))
    other = qloop.create_task(confirmer(summary(extension="com.example.other", request="other")))
    qtbot.waitUntil(lambda: len(confirmer.open_dialogs) == 2, timeout=3000)
    assert sorted(d.summary.request for d in confirmer.open_dialogs) == ["first", "other"]
    for dialog in list(confirmer.open_dialogs):
        dialog.guard.release()
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert run(outcome(first), 5) is Decision.DECLINED
    assert run(outcome(other), 5) is Decision.DECLINED
    dialog = open_dialog(qtbot, confirmer)
    assert dialog.summary.request == "second"
    qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    assert run(outcome(second), 5) is Decision.CONFIRMED


def test_the_confirmer_answers_expired_when_the_token_runs_out_and_the_dialog_says_so(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, run: Any
) -> None:
    confirmer = DialogConfirmer(margin=0.0)
    task = qloop.create_task(confirmer(summary(expires_in=0.2)))
    assert run(outcome(task), 5) is Decision.EXPIRED
    dialog = confirmer.open_dialogs[0]
    assert dialog.isVisible()
    assert "expired" in dialog.notice.text()
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not confirmer.open_dialogs, timeout=3000)


def test_a_write_whose_turn_comes_after_its_token_ran_out_expires_without_a_dialog(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, run: Any
) -> None:
    now = [0.0]
    confirmer = DialogConfirmer(margin=1.0, clock=lambda: now[0])
    first = qloop.create_task(confirmer(summary()))
    late = qloop.create_task(confirmer(summary(expires_in=10.0, request="late")))
    dialog = open_dialog(qtbot, confirmer)
    now[0] = 20.0  # the user took longer over the first dialog than the second token lives
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert run(outcome(first), 5) is Decision.DECLINED
    assert run(outcome(late), 5) is Decision.EXPIRED
    assert all(d.summary.request != "late" for d in confirmer.open_dialogs)


HTTP_URL = "https://api.github.com/repos/me/app/issues/7?" + "&".join(f"field{i}=value{i}" for i in range(12))
DB_SQL = "UPDATE tickets SET status = 'closed', closed_by = ? WHERE id = ? AND status <> 'closed'"


def as_the_kinds_build_them(kind: str) -> WriteSummary:
    """The fields and request exactly as the http and db kinds describe a write."""
    if kind == "http":
        return summary(
            "http",
            fields=(("Service", "github"), ("Method", "PATCH"), ("URL", HTTP_URL)),
            request=f'PATCH {HTTP_URL}\n\n{{"state": "closed"}}',
        )
    return summary(
        "db",
        fields=(("Query", "close"), ("Connection", "local-app"), ("SQL", DB_SQL), ("Args", '["sam",42]')),
        request=f'{DB_SQL}\n\nargs: ["sam",42]',
    )


def occurrences(dialog: ConfirmDialog, text: str) -> int:
    shown = [w.text() for w in dialog.findChildren(QLabel)] + [
        w.text() for w in dialog.findChildren(QLineEdit)
    ]
    shown += [w.toPlainText() for w in dialog.findChildren(QPlainTextEdit)]
    return sum(t.count(text) for t in shown)


@pytest.mark.parametrize(("kind", "request_text"), [("http", HTTP_URL), ("db", DB_SQL), ("db", '["sam",42]')])
def test_the_dialog_shows_the_request_once(qtbot: QtBot, kind: str, request_text: str) -> None:
    dialog = shown(qtbot, ConfirmDialog(as_the_kinds_build_them(kind)))
    assert occurrences(dialog, request_text) == 1


def test_the_http_request_keeps_its_url_on_one_line_and_scrolls_sideways(qtbot: QtBot) -> None:
    dialog = shown(qtbot, ConfirmDialog(as_the_kinds_build_them("http")))
    box = dialog.request_box
    assert box is not None
    assert box.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap
    first = box.document().firstBlock()
    assert first.text() == f"PATCH {HTTP_URL}"
    assert first.layout().lineCount() == 1
    assert box.horizontalScrollBar().maximum() > 0  # longer than the box: it scrolls


@pytest.mark.parametrize("kind", ["http", "db"])
def test_the_request_block_is_directly_under_the_fields_with_no_gap(qtbot: QtBot, kind: str) -> None:
    dialog = shown(qtbot, ConfirmDialog(as_the_kinds_build_them(kind)))
    dialog.resize(640, 900)  # taller than it needs: the spare room goes below the request
    qtbot.wait_until(lambda: dialog.height() == 900)
    box = dialog.request_box
    assert box is not None
    caption = next(
        w for w in dialog.findChildren(QLabel) if w.text().endswith("exactly as Helm will send it")
    )
    last_field = max(
        (w for w in dialog.findChildren(QLabel) if w.objectName() != "heading" and w.y() < caption.y()),
        key=lambda w: w.y(),
    )
    spacing = 3 * dialog.fontMetrics().height()
    assert caption.y() - (last_field.y() + last_field.height()) < spacing
    assert box.y() - (caption.y() + caption.height()) < spacing


@pytest.mark.parametrize("kind", ["http", "db"])
def test_the_fields_take_the_dialogs_width_not_a_narrow_column(qtbot: QtBot, kind: str) -> None:
    long_name = "Production GitHub Enterprise (the company's main account for every repository)"
    built = as_the_kinds_build_them(kind)
    fields = (("Service" if kind == "http" else "Connection", long_name), *built.fields[1:])
    dialog = shown(qtbot, ConfirmDialog(replace(built, fields=fields)))
    dialog.resize(640, 560)
    qtbot.wait_until(lambda: dialog.width() == 640)
    value = next(w for w in dialog.findChildren(QLabel) if w.text() == long_name)
    assert value.width() > dialog.width() // 2
