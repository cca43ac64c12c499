"""The main window's frame (``ui.shell``): shown before Helm is imported, in the user's look,
then holding Helm's window; closing either closes both, and a window that refuses to close
keeps its frame."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from ui.preferences import Preferences, PreferencesStore
from ui.qt import QApplication, QCloseEvent, QLabel, QMainWindow, QPalette
from ui.shell import HEIGHT, WAITING, WIDTH, WindowShell
from ui.theme import Theme
from ui.theme_data import DARK, LIGHT, Appearance


class Refusing(QMainWindow):
    """A window with work it will not drop: it refuses to close while ``busy``."""

    busy = True
    asked = 0

    def closeEvent(self, event: QCloseEvent) -> None:
        self.asked += 1
        if self.busy:
            event.ignore()
        else:
            super().closeEvent(event)


def shown(qtbot: QtBot, shell: WindowShell) -> WindowShell:
    qtbot.addWidget(shell)
    with qtbot.waitSignal(shell.painted, timeout=5000):
        shell.show()
    return shell


def test_the_frame_shows_helms_title_and_size_and_says_it_is_opening(qtbot: QtBot) -> None:
    shell = shown(qtbot, WindowShell())
    assert shell.windowTitle() == "Helm"
    assert (shell.width(), shell.height()) == (WIDTH, HEIGHT)
    assert shell.waiting is not None and shell.waiting.text() == WAITING
    assert not QApplication.windowIcon().isNull()
    with qtbot.assertNotEmitted(shell.painted):
        shell.repaint()  # ``painted`` is the first paint only


def test_the_frame_comes_in_the_look_the_user_chose(qtbot: QtBot, theme: Theme, tmp_path: Path) -> None:
    PreferencesStore.in_home(tmp_path).set(Preferences(appearance=Appearance.DARK))
    shown(qtbot, WindowShell(tmp_path))
    assert QApplication.palette().color(QPalette.ColorRole.Window).name() == DARK.window
    shown(qtbot, WindowShell(tmp_path / "no-home-yet"))  # nothing chosen: the system's (light)
    assert QApplication.palette().color(QPalette.ColorRole.Window).name() == LIGHT.window


def test_the_window_takes_the_frames_place_and_gives_it_its_title(qtbot: QtBot) -> None:
    shell = shown(qtbot, WindowShell())
    waiting = shell.waiting
    window = QMainWindow()
    window.setWindowTitle("Helm — demo")
    shell.adopt(window)
    assert window.parent() is shell and window.window() is shell and window.isVisible()
    assert shell.waiting is None
    qtbot.waitUntil(lambda: not shell.findChildren(QLabel), timeout=2000)  # the text went
    assert waiting is not None
    assert shell.windowTitle() == "Helm — demo"
    window.setWindowTitle("Helm — work")
    assert shell.windowTitle() == "Helm — work"
    with pytest.raises(RuntimeError, match="already holds"):
        shell.adopt(QMainWindow())


def test_closing_the_frame_closes_the_window_in_it(qtbot: QtBot) -> None:
    shell = shown(qtbot, WindowShell())
    window = Refusing()
    window.busy = False
    shell.adopt(window)
    with qtbot.assertNotEmitted(shell.closing):
        assert shell.close()
    assert window.asked == 1
    assert not window.isVisible() and not shell.isVisible()


def test_a_window_that_refuses_to_close_keeps_its_frame_open(qtbot: QtBot) -> None:
    shell = shown(qtbot, WindowShell())
    window = Refusing()
    shell.adopt(window)
    assert not shell.close()
    assert window.asked == 1 and window.isVisible() and shell.isVisible()
    window.busy = False
    assert shell.close()
    assert not shell.isVisible()


def test_a_window_closed_from_inside_takes_its_frame_with_it(qtbot: QtBot) -> None:
    shell = shown(qtbot, WindowShell())
    window = QMainWindow()
    shell.adopt(window)
    window.close()  # the window's own Quit
    qtbot.waitUntil(lambda: not shell.isVisible(), timeout=2000)


def test_a_window_refusing_its_own_close_keeps_its_frame(qtbot: QtBot) -> None:
    shell = shown(qtbot, WindowShell())
    window = Refusing()
    shell.adopt(window)
    window.close()
    qtbot.wait(50)  # past the frame's look at the window
    assert shell.isVisible() and window.isVisible()
    window.busy = False


def test_a_frame_closed_before_any_window_came_says_so(qtbot: QtBot) -> None:
    shell = shown(qtbot, WindowShell())
    with qtbot.waitSignal(shell.closing, timeout=1000):
        assert shell.close()
    assert not shell.isVisible()


def test_the_frame_needs_neither_the_broker_nor_helms_pages() -> None:
    probe = textwrap.dedent(
        """
        import sys
        import ui.shell
        heavy = sorted(m for m in ("broker.broker", "broker.kinds", "ui.main_window", "app.window")
                       if m in sys.modules)
        print(heavy)
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr
