"""Helm ▸ Updates…: an update shows what it adds, lands only through the usual review's Approve
update, and can be stepped back; background checks stay off until the user turns them on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker, extensions
from broker.catalogue import updates
from broker.catalogue.store import CatalogueStore
from broker.workspaces import add_workspace
from tests.helpers import new_broker
from tests.ui.a11y import reachable, tab_walk, unnamed
from tests.unit.catalogue.conftest import EXT, FILES, Publisher, board
from ui.dialogs.review import ReviewDialog
from ui.qt import QGroupBox, QLabel, QPushButton, Qt
from ui.updates_view import UpdatesView


@pytest.fixture
def publisher(tmp_path: Path) -> Publisher:
    (tmp_path / "catalogue").mkdir()
    (tmp_path / "work").mkdir()
    return Publisher(tmp_path / "catalogue", tmp_path / "work")


@pytest.fixture
def broker(tmp_path: Path, run: Any, publisher: Publisher) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    (tmp_path / "root").mkdir()
    add_workspace(b.home, "ws", tmp_path / "root")
    publisher.release(board("1.0.0"))
    entry = publisher.entry(str(publisher.folder))
    with CatalogueStore(b.home.path).update() as state:
        state.catalogues["acme"] = entry

    async def install() -> None:
        fetched = await updates.fetch(b.home.path, entry, EXT)
        extensions.install(b.home, "ws", fetched.manifest.folder)
        updates.record_install(b.home.path, "ws", fetched)
        await extensions.review_and_approve(b, "ws", EXT)

    run(install())
    yield b
    run(b.aclose())


def view_of(qtbot: QtBot, broker: Broker) -> UpdatesView:
    view = UpdatesView(broker, lambda: "ws")
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return view


def installed_version(broker: Broker) -> str:
    return broker.manifest("ws", EXT).version


def review_dialog(qtbot: QtBot, view: UpdatesView) -> ReviewDialog:
    qtbot.waitUntil(lambda: f"review:{EXT}" in view.windows, timeout=10000)
    dialog = view.windows[f"review:{EXT}"]
    assert isinstance(dialog, ReviewDialog)
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    dialog.guard.release()
    return dialog


def test_an_update_shows_what_it_adds_and_lands_only_on_approve_update(
    qtbot: QtBot, broker: Broker, publisher: Publisher, run: Any
) -> None:
    publisher.release(board("1.1.0", connections=[dict(FILES, paths=["notes/*.md", "private/*"])]))
    view = view_of(qtbot, broker)
    run(view.check())
    box = view.body.findChild(QGroupBox, f"update:{EXT}")
    assert box is not None and box.title() == f"Board 1.0.0 → 1.1.0 ({EXT})"
    assert box.findChild(QLabel, "diff").text() == "• [notes] new glob private/*"
    assert installed_version(broker) == "1.0.0"
    qtbot.mouseClick(box.findChild(QPushButton, "review"), Qt.MouseButton.LeftButton)
    dialog = review_dialog(qtbot, view)
    assert dialog.accept_button.text() == "Approve update"
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    assert "Compared with what you approved:\n• [notes] new glob private/*" in texts
    assert any("The version you approved keeps running" in t for t in texts)
    assert installed_version(broker) == "1.0.0"  # not until the click
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: installed_version(broker) == "1.1.0", timeout=10000)
    qtbot.waitUntil(lambda: view.body.findChild(QPushButton, f"rollback:{EXT}") is not None, timeout=10000)
    qtbot.mouseClick(view.body.findChild(QPushButton, f"rollback:{EXT}"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: installed_version(broker) == "1.0.0", timeout=10000)
    assert broker.standing("ws", EXT).allows_calls


def test_an_update_that_adds_nothing_still_needs_its_one_click(
    qtbot: QtBot, broker: Broker, publisher: Publisher, run: Any
) -> None:
    publisher.release(board("1.0.1"))
    view = view_of(qtbot, broker)
    run(view.check())
    box = view.body.findChild(QGroupBox, f"update:{EXT}")
    assert box.findChild(QLabel, "diff").text() == "• no new capabilities"
    qtbot.mouseClick(box.findChild(QPushButton, "review"), Qt.MouseButton.LeftButton)
    dialog = review_dialog(qtbot, view)
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: "keeps running as you approved it" in view.status.text(), timeout=5000)
    assert installed_version(broker) == "1.0.0"


def test_background_checks_are_off_until_the_user_turns_them_on(
    qtbot: QtBot, broker: Broker, publisher: Publisher
) -> None:
    view = view_of(qtbot, broker)
    view.follow_setting()
    assert not view.poll_box.isChecked() and not view.timer.isActive()
    publisher.release(board("1.0.1"))
    view.poll_box.setChecked(True)
    assert CatalogueStore(broker.home.path).read().poll is True and view.timer.isActive()
    qtbot.waitUntil(lambda: view.body.findChild(QGroupBox, f"update:{EXT}") is not None, timeout=10000)
    view.poll_box.setChecked(False)
    assert not view.timer.isActive()


def test_a_withdrawn_version_is_shown_stopped_with_the_catalogue_s_reason(
    qtbot: QtBot, broker: Broker, publisher: Publisher, run: Any
) -> None:
    from broker.catalogue import Status, publish

    publish.set_status(publisher.folder, EXT, "1.0.0", Status.WITHDRAWN, "it sends notes away")
    publisher.sign()
    view = view_of(qtbot, broker)
    run(view.check())
    texts = [label.text() for label in view.body.findChildren(QLabel)]
    assert f"Stopped: catalogue acme withdrew {EXT} 1.0.0: it sends notes away" in texts
    assert broker.activity.switch.is_stopped("ws", EXT)


def test_every_control_of_the_updates_window_is_named_and_reached_by_tab(
    qtbot: QtBot, broker: Broker, publisher: Publisher, run: Any
) -> None:
    publisher.release(board("1.0.1"))
    view = view_of(qtbot, broker)
    run(view.check())
    assert unnamed(view) == []
    walked = tab_walk(qtbot, reachable(view)[0])
    assert [c for c in reachable(view) if c not in walked] == []
