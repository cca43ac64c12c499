"""The test-only ``echo`` kind (tests/kinds/echo) in Helm's windows: its confirm dialog and its
Settings → Connections tab come from its folder alone (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker, Decision
from broker.kinds import registered
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension
from tests.kinds.echo import ECHO
from ui.dialogs.confirm import ConfirmDialog
from ui.qt import QLabel, Qt
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage

ROOM = {"id": "e", "kind": "echo", "room": "lobby", "operations": ["hello"], "writes": ["hey"]}


@pytest.fixture
def broker(tmp_path: Path, run: Any) -> Iterator[Broker]:
    with registered(ECHO):
        b = new_broker(tmp_path / "home")
        b.home.ensure()
        yield b
        run(b.aclose())


def test_a_write_of_the_kind_gets_its_confirm_dialog(
    qtbot: QtBot, broker: Broker, tmp_path: Path, run: Any
) -> None:
    assert ECHO.profiles is not None
    ECHO.profiles.store(broker.home, broker.credentials).save(
        ECHO.profiles.parse("lobby", {"greeting": "hi"}), {"token": "t"}
    )
    ctx = run(setup_extension(broker, tmp_path, manifest_dict([ROOM], write=True)))
    confirm = ScriptedConfirmer(Decision.DECLINED)
    run(broker.request(ctx, "e", "hey", {"loud": True}, confirm))
    dialog = ConfirmDialog(confirm.shown[0])
    qtbot.addWidget(dialog)
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    assert dialog.windowTitle() == "Confirm shout"
    assert "Test extension (com.example.test) wants to shout in a room." in texts
    assert "Shout — exactly as Helm will send it" in texts
    assert {"lobby", "hey"} <= set(texts)


def test_settings_has_a_tab_drawn_from_the_kinds_form(qtbot: QtBot, broker: Broker) -> None:
    page = ConnectionsPage(BrokerConnections(broker))
    qtbot.addWidget(page)
    rooms = page.pages["echo"]
    assert page.tabs.tabText(page.tabs.indexOf(rooms)) == "Rooms"
    rooms.fields["name"].set("lobby")
    assert not rooms.save_button.isEnabled()  # no greeting yet
    rooms.fields["greeting"].set("hi")
    rooms.fields["token"].set("t")
    qtbot.mouseClick(rooms.save_button, Qt.MouseButton.LeftButton)
    assert broker.home.settings().profiles("rooms") == {"lobby": {"greeting": "hi"}}
    assert broker.credentials.get("rooms/lobby/token") == "t"
