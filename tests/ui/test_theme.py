"""Helm's look on a real Helm home: the system's colour scheme, live; Preferences for the
appearance and the text size, kept in the home; tones that stay legible on either scheme."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from broker.extensions import review
from broker.workspaces import add_workspace
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.ui.dashboard_kit import open_main_window
from ui.dialogs.confirm import diff_view
from ui.dialogs.review import review_dialog
from ui.preferences import FILE_NAME, Preferences, PreferencesStore
from ui.preferences_dialog import PreferencesDialog
from ui.qt import QApplication, QPalette, Qt, QWidget
from ui.text import plain_box
from ui.theme import Theme
from ui.theme_data import DARK, LIGHT, Appearance, Scheme, contrast
from ui.workspace_model import WorkspaceModel


@pytest.fixture
def broker(tmp_path: Path, run: Any) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    b.home.ensure()
    add_workspace(b.home, "main", tmp_path)
    yield b
    run(b.aclose())


def window_colour(app: QApplication) -> str:
    return app.palette().color(QPalette.ColorRole.Window).name()


def test_helm_turns_dark_when_the_system_does_and_back(
    qtbot: QtBot, qapp: QApplication, theme: Theme, broker: Broker
) -> None:
    window = open_main_window(qtbot, broker)
    assert window_colour(qapp) == LIGHT.window
    with qtbot.waitSignal(theme.changed, timeout=2000):
        qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert window_colour(qapp) == DARK.window
    assert window.palette().color(QPalette.ColorRole.Base).name() == DARK.surface
    assert f"color: {DARK.danger}" in qapp.styleSheet()  # the error tone, for the dark scheme
    qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert window_colour(qapp) == LIGHT.window


def test_the_appearance_chosen_in_preferences_wins_over_the_system_and_is_kept(
    qtbot: QtBot, qapp: QApplication, theme: Theme, broker: Broker
) -> None:
    open_main_window(qtbot, broker)
    qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    dialog = PreferencesDialog(WorkspaceModel(broker).preferences)
    qtbot.addWidget(dialog)
    dialog.appearance.setCurrentIndex(dialog.appearance.findData(Appearance.LIGHT.value))
    assert window_colour(qapp) == LIGHT.window
    theme.follow(Preferences())  # as if Helm started again…
    assert window_colour(qapp) == DARK.window
    open_main_window(qtbot, broker)  # …on the same home
    assert window_colour(qapp) == LIGHT.window


def test_the_text_size_in_preferences_sizes_helm_and_its_text_boxes_and_is_kept(
    qtbot: QtBot, qapp: QApplication, theme: Theme, broker: Broker
) -> None:
    window = open_main_window(qtbot, broker)
    box = plain_box("SELECT 1", window)
    dialog = PreferencesDialog(window.model.preferences)
    qtbot.addWidget(dialog)
    dialog.system_size.setChecked(False)
    dialog.font_size.setValue(16.0)
    assert qapp.font().pointSizeF() == 16.0
    assert box.font().pointSizeF() == 16.0, "monospace boxes follow the text size"
    assert PreferencesStore.in_home(broker.home.path).get().font_pt == 16.0
    dialog.system_size.setChecked(True)
    assert qapp.font().pointSizeF() == theme.system_font_pt


def test_a_preferences_file_helm_cannot_read_is_reported_and_left_alone(
    qtbot: QtBot, theme: Theme, broker: Broker
) -> None:
    path = broker.home.path / FILE_NAME
    path.write_text('{"version": 1, "font_pt": 300}')
    dialog = PreferencesDialog(PreferencesStore(path))
    qtbot.addWidget(dialog)
    assert "cannot be read" in dialog.status.text()
    dialog.system_size.setChecked(False)
    dialog.font_size.setValue(12.0)
    assert path.read_text() == '{"version": 1, "font_pt": 300}'
    assert "cannot be read" in dialog.status.text()


FILES = {"id": "fs", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["write"]}
MCP = {"id": "tools", "kind": "mcp", "server": "everything", "operations": ["echo"], "writes": ["add"]}


def test_the_review_dialogs_writes_and_warnings_take_the_schemes_colours(
    qtbot: QtBot, qapp: QApplication, theme: Theme, broker: Broker, tmp_path: Path, run: Any
) -> None:
    qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    ctx = run(setup_extension(broker, tmp_path, manifest_dict([FILES, MCP], write=True)))
    dialog = review_dialog(run(review(broker, ctx.workspace, ctx.extension)), guard_ms=0)
    qtbot.addWidget(dialog)
    dialog.show()
    toned = {w.property("tone") for w in dialog.findChildren(QWidget) if w.property("tone")}
    assert {"write", "warning"} <= toned
    for widget in [dialog, *dialog.findChildren(QWidget)]:
        assert "#" not in widget.styleSheet(), f"{widget.objectName()} fixes a colour of one scheme"
    write = next(w for w in dialog.findChildren(QWidget) if w.property("tone") == "write")
    assert write.palette().color(QPalette.ColorRole.WindowText).name() == DARK.danger


@pytest.mark.parametrize("scheme", list(Scheme))
def test_a_diffs_added_removed_and_position_lines_read_on_the_scheme(
    qapp: QApplication, theme: Theme, scheme: Scheme
) -> None:
    theme.follow(Preferences(Appearance(scheme.value)))
    surface = theme.look.colours.surface
    box = diff_view("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n")
    block = box.document().findBlockByNumber(2)
    for _ in range(3):
        fmt = block.begin().fragment().charFormat()
        text, background = fmt.foreground().color().name(), fmt.background().color().name()
        assert contrast(text, background) >= 4.5, block.text()
        assert contrast(background, surface) < 1.6, f"{block.text()}: a tint of the box, not a block of light"
        block = block.next()
