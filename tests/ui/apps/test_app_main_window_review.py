"""Review… of an added MCP App in the main window: the app's own review, against the real
SDK-built app server, and an approval that pins what it showed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.window import open_window
from broker import Broker
from broker.approval import Standing
from broker.apps.verify import open_app
from tests.helpers import new_broker
from tests.ui.dashboard_kit import open_main_window
from tests.unit.apps.app_setup import added, app_home
from ui.apps.dialogs import AppReviewDialog
from ui.main_window import MainWindow
from ui.qt import QLabel, Qt, QWidget

pytestmark = pytest.mark.usefixtures("mcp_app_server")
CDN = "https://cdn.example.com"


@pytest.fixture
def home(tmp_path: Path, run: Any) -> Iterator[tuple[Broker, str, Path]]:
    """The board app added to ``ws`` with the CDN allowed; the file whose text changes its HTML."""
    extra = tmp_path / "extra.html"
    broker = new_broker(tmp_path / "home")
    run(app_home(broker, tmp_path, "--extra", str(extra), "--resource", CDN))
    ext_id = run(added(broker, allow=(CDN,)), timeout=60)
    yield broker, ext_id, extra
    run(broker.aclose())


def app_review(qtbot: QtBot, window: MainWindow, ext_id: str) -> AppReviewDialog:
    qtbot.waitUntil(lambda: f"review:{ext_id}" in window.windows, timeout=30000)
    dialog = window.windows[f"review:{ext_id}"]
    assert isinstance(dialog, AppReviewDialog), f"the review shown is a {type(dialog).__name__}"
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    dialog.guard.release()
    return dialog


def test_review_of_a_changed_app_shows_the_app_review_and_approve_pins_what_it_showed(
    qtbot: QtBot, home: tuple[Broker, str, Path], run: Any
) -> None:
    broker, ext_id, extra = home
    before = broker.manifest("ws", ext_id).app
    extra.write_text("<p>changed</p>", encoding="utf-8")
    window = open_main_window(qtbot, broker)
    window.workspace_box.setCurrentText("ws")
    item = window.tree.findItems("Board", Qt.MatchFlag.MatchStartsWith | Qt.MatchFlag.MatchRecursive)[0]
    window.tree.setCurrentItem(item)
    qtbot.mouseClick(window.buttons["review"], Qt.MouseButton.LeftButton)
    dialog = app_review(qtbot, window, ext_id)
    shown = dialog.reviewed.document.sha256
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    assert dialog.findChild(QWidget, "sha256").text().startswith(f"HTML sha256: {shown}")  # type: ignore[union-attr]
    assert any("Changed since your last approval" in t and "the HTML changed" in t for t in texts)
    assert any(t.startswith("WRITE — add_item") for t in texts)
    assert dialog.allow[CDN].isChecked(), "what was allowed before is shown allowed"
    assert set(dialog.only_reads) == {"add_item"}, "only a tool Helm would confirm can be marked"
    assert not dialog.only_reads["add_item"].isChecked(), "off by default"
    dialog.only_reads["add_item"].setChecked(True)
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.tasks, timeout=30000)
    app = broker.manifest("ws", ext_id).app
    opened = run(open_app(broker, "ws", ext_id), timeout=60)
    assert app is not None and app.marked_reads == ("add_item",) and ("add_item", False) in app.tools
    assert before is not None and app is not None and before.sha256 != shown
    assert app.sha256 == shown == opened.spec.sha256
    assert app.allowed_resource_domains == (CDN,)
    assert broker.standing("ws", ext_id).standing is Standing.CURRENT


def test_an_app_whose_manifest_is_not_the_approved_one_gets_the_app_review_when_its_workspace_opens(
    qtbot: QtBot, home: tuple[Broker, str, Path]
) -> None:
    broker, ext_id, _extra = home
    path = broker.manifest("ws", ext_id).folder / "manifest.json"
    raw = json.loads(path.read_text("utf-8"))
    raw["app"]["sha256"] = "0" * 64
    path.write_text(json.dumps(raw), encoding="utf-8")
    window = open_main_window(qtbot, broker)
    dialog = app_review(qtbot, window, ext_id)
    assert any("not the one you approved" in label.text() for label in dialog.findChildren(QLabel))
    assert not dialog.allow[CDN].isChecked(), "nothing of a manifest nobody approved is offered as allowed"
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.tasks, timeout=30000)
    app = broker.manifest("ws", ext_id).app
    assert app is not None and app.sha256 == dialog.reviewed.document.sha256
    assert app.allowed_resource_domains == ()
    assert broker.standing("ws", ext_id).standing is Standing.CURRENT
    assert window.notice.text() == "Approved Board."


def test_a_changed_apps_frame_offers_review_and_the_app_runs_once_approved(
    qtbot: QtBot, home: tuple[Broker, str, Path], run: Any
) -> None:
    broker, ext_id, extra = home
    extra.write_text("<p>changed</p>", encoding="utf-8")
    window = open_window(broker)
    try:
        qtbot.waitUntil(lambda: bool(window.apps.frames), timeout=30000)
        (refused,) = window.apps.frames
        qtbot.waitUntil(refused.opening.done, timeout=30000)
        assert refused.view is None and "• the HTML changed" in refused.notice.text()
        assert refused.review_button.isVisible()
        qtbot.mouseClick(refused.review_button, Qt.MouseButton.LeftButton)
        dialog = app_review(qtbot, window.window, ext_id)
        with qtbot.waitSignal(dialog.decided, timeout=3000):
            qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: any(f.view is not None for f in window.apps.frames), timeout=30000)
        app = broker.manifest("ws", ext_id).app
        assert app is not None and app.sha256 == dialog.reviewed.document.sha256
    finally:
        run(window.aclose())


def test_cancelling_the_review_of_an_approved_app_says_it_keeps_its_approval(
    qtbot: QtBot, home: tuple[Broker, str, Path]
) -> None:
    broker, ext_id, _extra = home
    window = open_main_window(qtbot, broker)
    window.workspace_box.setCurrentText("ws")
    item = window.tree.findItems("Board", Qt.MatchFlag.MatchStartsWith | Qt.MatchFlag.MatchRecursive)[0]
    window.tree.setCurrentItem(item)
    qtbot.mouseClick(window.buttons["review"], Qt.MouseButton.LeftButton)
    dialog = app_review(qtbot, window, ext_id)
    assert dialog.windowTitle() == f"Review app Board ({ext_id})", "the id beside the name"
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.tasks, timeout=30000)
    assert window.notice.text() == "Nothing changed: Board keeps the approval it had."
    assert window.notice.property("tone") == "ok"
    assert broker.standing("ws", ext_id).approved
