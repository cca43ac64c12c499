"""Helm's own look: visible focus, empty screens that say what to do next, a palette that says
when nothing matches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from tests.ui.dashboard_kit import home_with, open_main_window
from ui.activity_view import NO_CALLS
from ui.dashboard import EMPTY_DASHBOARD
from ui.qt import QImage, QPushButton, QVBoxLayout, QWidget
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage
from ui.theme import Theme


def test_the_keyboard_focus_draws_a_ring_on_a_button(qtbot: QtBot) -> None:
    Theme.of()
    host = QWidget()
    qtbot.addWidget(host)
    col = QVBoxLayout(host)
    first, second = QPushButton("First", host), QPushButton("Second", host)
    col.addWidget(first)
    col.addWidget(second)
    host.show()
    qtbot.waitExposed(host)
    host.activateWindow()
    second.setFocus()
    qtbot.waitUntil(second.hasFocus)
    unfocused: QImage = first.grab().toImage()
    first.setFocus()
    qtbot.waitUntil(first.hasFocus)
    focused: QImage = first.grab().toImage()
    accent = Theme.of().look.colours.accent.lower()
    edge = [focused.pixelColor(x, focused.height() // 2).name() for x in range(3)]
    assert focused != unfocused
    assert accent in edge


def test_an_empty_dashboard_and_an_empty_activity_say_what_to_do_next(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    window = open_main_window(qtbot, run(home_with(tmp_path, [])))
    assert window.dashboard.empty.isVisible()
    assert window.dashboard.empty.text() == EMPTY_DASHBOARD
    assert "Install an extension" in EMPTY_DASHBOARD
    window.tabs.setCurrentWidget(window.activity)
    qtbot.waitUntil(lambda: window.activity.shown.text() == NO_CALLS)


def test_an_empty_list_of_profiles_says_how_to_add_one_and_goes_once_there_is_one(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, []))
    page = ConnectionsPage(BrokerConnections(broker))
    qtbot.addWidget(page)
    page.show()
    services = page.pages["http"]
    assert services.empty_hint.isVisible()
    assert services.empty_hint.text().startswith("No ")
    assert "Save" in services.empty_hint.text()
    services.fields["name"].edit.setText("github")  # type: ignore[union-attr]
    services.fields["base_url"].edit.setText("https://api.github.com")  # type: ignore[union-attr]
    services.save()
    qtbot.waitUntil(lambda: services.list.count() == 1)
    assert not services.empty_hint.isVisible()


def test_the_palette_says_when_no_command_matches(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    window = open_main_window(qtbot, run(home_with(tmp_path, [])))
    palette = window.open_palette()
    qtbot.keyClicks(palette.search, "zzqx")
    assert palette.list.count() == 0
    assert palette.nothing.isVisible()
    assert "zzqx" in palette.nothing.text()
    palette.search.setText("activity")
    assert not palette.nothing.isVisible()
