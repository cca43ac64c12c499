"""What a screen reader can read of Helm's dialogs: Qt's accessibility interface exposes every
text the dialog shows, for a real write described by the real broker and a real review."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker, CallContext
from broker.extensions import review
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.ui.a11y import texts
from ui.dialogs.confirm import EXPIRED_TEXT, ConfirmDialog
from ui.dialogs.review import review_dialog

FILES = {"id": "fs", "kind": "files", "root": "workspace", "paths": ["notes/*.md"], "operations": ["write"]}


@pytest.fixture
def home(tmp_path: Path, run: Any) -> Any:
    broker = new_broker(tmp_path / "home")
    broker.home.ensure()
    ctx = run(setup_extension(broker, tmp_path, manifest_dict([FILES], write=True, name="Notes <b>x</b>")))
    (tmp_path / "root" / "notes").mkdir()
    (tmp_path / "root" / "notes" / "a.md").write_text("line 1\nline 2\n")
    yield broker, ctx
    run(broker.aclose())


def test_a_screen_reader_reads_the_whole_write_dialog_and_its_expiry(
    qtbot: QtBot, run: Any, home: tuple[Broker, CallContext]
) -> None:
    broker, ctx = home
    old = hashlib.sha256(b"line 1\nline 2\n").hexdigest()
    args = {"path": "notes/a.md", "text": "line 1\nline two\n", "expected_sha256": old}
    summary = run(broker.describe_write(ctx, "fs", "write", args))
    dialog = ConfirmDialog(summary, guard_ms=0)
    qtbot.addWidget(dialog)
    dialog.show()
    read = texts(dialog)
    assert "Confirm file change" in read  # the dialog's own name: its title
    assert "Notes <b>x</b> (com.example.test) wants to change a file." in read  # as characters
    for label, value in summary.fields:
        assert label in read
        assert value in read
    assert any("+line two" in t and "-line 2" in t for t in read), "the line changes, as text"
    assert "Line changes" in read
    assert "Nothing is sent unless you click Confirm." in read
    assert {"Cancel", "Confirm"} <= set(read)
    dialog.expire()
    assert EXPIRED_TEXT in texts(dialog)


def test_a_screen_reader_reads_what_the_review_dialog_says_an_extension_may_do(
    qtbot: QtBot, run: Any, home: tuple[Broker, CallContext]
) -> None:
    broker, ctx = home
    reviewed = run(review(broker, ctx.workspace, ctx.extension))
    dialog = review_dialog(reviewed, guard_ms=0)
    qtbot.addWidget(dialog)
    dialog.show()
    read = texts(dialog)
    assert "Review Notes <b>x</b> (com.example.test)" in read
    assert "May write: yes — every write asks for your confirmation" in read
    connection = reviewed.review.connections[0]
    assert any(connection.id in t and connection.kind in t for t in read)
    assert all(item.label in read for item in connection.writes)
    assert {"Cancel", "Approve"} <= set(read)
