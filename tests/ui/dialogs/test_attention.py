"""A confirmation that arrives while the user is elsewhere: the window comes up, the desktop is
told, and the keyboard is not taken — Cancel keeps the focus and stays the default.

A real write through the real broker; "elsewhere" is another application's window having the
keyboard (a bare window of the platform's, which no Helm widget owns).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker, CallContext
from tests.e2e.host.kit import Dialogs
from tests.helpers import manifest_dict, new_broker, setup_extension
from ui.attention import Attention, in_background, tray_notifier
from ui.dialogs.confirm import DialogConfirmer
from ui.qt import QApplication, QMainWindow, Qt, QWidget, QWindow
from ui.shell import WindowShell

FILES = {"id": "fs", "kind": "files", "root": "workspace", "paths": ["notes/*.md"], "operations": ["write"]}
OLD, NEW = "line 1\n", "line one\n"


class Notes:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def notify(self, title: str, message: str) -> None:
        self.sent.append((title, message))


@pytest.fixture
def home(tmp_path: Path, run: Any) -> Iterator[tuple[Broker, CallContext, Path]]:
    broker = new_broker(tmp_path / "home")
    broker.home.ensure()
    manifest = manifest_dict([FILES], write=True, name="<b>Notes</b> & co")
    ctx = run(setup_extension(broker, tmp_path, manifest))
    note = tmp_path / "root" / "notes" / "a.md"
    note.parent.mkdir()
    note.write_text(OLD)
    yield broker, ctx, note
    run(broker.aclose())


def write_args() -> dict[str, Any]:
    return {"path": "notes/a.md", "text": NEW, "expected_sha256": hashlib.sha256(OLD.encode()).hexdigest()}


def elsewhere(qtbot: QtBot) -> QWindow:
    """Another application's window takes the keyboard."""
    other = QWindow()
    other.show()
    other.requestActivate()
    qtbot.waitUntil(in_background, timeout=2000)
    return other


@pytest.mark.parametrize("framed", [False, True], ids=["window", "window-in-its-frame"])
def test_a_confirmation_in_the_background_raises_the_window_and_notifies_but_leaves_the_keys(
    qtbot: QtBot, run: Any, home: tuple[Broker, CallContext, Path], framed: bool
) -> None:
    broker, ctx, note = home
    window = QMainWindow()
    top: QWidget = window
    if framed:  # as the desktop shows it: in the frame the start painted first (ui.shell)
        top = WindowShell()
        top.adopt(window)
    qtbot.addWidget(top)
    top.show()
    top.showMinimized()
    dialogs, notes = Dialogs(), Notes()
    confirm = DialogConfirmer(factory=dialogs)
    confirm.set_parent(window, Attention(window, notes))
    other = elsewhere(qtbot)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        request = asyncio.ensure_future(broker.request(ctx, "fs", "write", write_args(), confirm))
        dialog = await asyncio.wait_for(dialogs.shown.get(), 10)
        seen = {
            "minimised": top.isMinimized(),
            "without_activating": dialog.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating),
            "focus_on_cancel": dialog.focusWidget() is dialog.cancel_button,
            "cancel_default": dialog.cancel_button.isDefault() and not dialog.accept_button.isDefault(),
        }
        dialog.cancel_button.click()
        return seen, await asyncio.wait_for(request, 10)

    seen, result = run(scenario())
    other.destroy()
    assert seen == {"minimised": False, "without_activating": True, "focus_on_cancel": True,
                    "cancel_default": True}  # fmt: skip
    assert notes.sent == [
        (
            "Confirm file change",
            "\u2039b\u203aNotes\u2039/b\u203a \uff06 co (com.example.test) wants to change a file."
            " Confirm or cancel it in Helm.",
        )
    ]
    assert result["error"]["code"] == "declined"
    assert note.read_text() == OLD


def test_a_confirmation_while_helm_has_the_keyboard_is_shown_as_usual(
    qtbot: QtBot, run: Any, home: tuple[Broker, CallContext, Path]
) -> None:
    broker, ctx, note = home
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    dialogs, notes = Dialogs(), Notes()
    confirm = DialogConfirmer(factory=dialogs)
    confirm.set_parent(window, Attention(window, notes))

    async def scenario() -> tuple[bool, dict[str, Any]]:
        request = asyncio.ensure_future(broker.request(ctx, "fs", "write", write_args(), confirm))
        dialog = await asyncio.wait_for(dialogs.shown.get(), 10)
        quiet = not dialog.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        dialog.accept_button.click()
        return quiet, await asyncio.wait_for(request, 10)

    quiet, result = run(scenario())
    assert quiet
    assert notes.sent == []
    assert result["ok"] is True
    assert note.read_text() == NEW


def test_without_a_system_tray_there_is_no_notifier(qapp: QApplication) -> None:
    # The offscreen platform has no tray, like a desktop without one: Helm still raises the
    # window and flags it, and makes no tray icon.
    window = QMainWindow()
    assert tray_notifier(window) is None
    window.deleteLater()
