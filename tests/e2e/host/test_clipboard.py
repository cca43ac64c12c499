"""A frame cannot change the clipboard, even right after the user clicked in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready
from ui.aio import emitted
from ui.host.clipboard import copy_text
from ui.qt import QApplication, QLineEdit, QPoint, Qt

BEFORE = "what the user copied"
PLANTED = "planted by the page"


@pytest.fixture
def page(run: Any, frames: Any, tmp_path: Path) -> Any:
    view = frames(copy_page("clipboard", tmp_path / "ext"), EchoHandler())
    view.show()
    run(wait_ready(view))
    QApplication.clipboard().setText(BEFORE)
    return view


async def click_plant(view: Any, qtbot: Any) -> None:
    """A real click on the page's button, through the widget that takes the frame's input."""
    x, y = await evaluate(
        view,
        "(() => { const r = document.getElementById('plant').getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()",
    )
    qtbot.mouseClick(view.web.focusProxy(), Qt.MouseButton.LeftButton, pos=QPoint(int(x), int(y)))


def test_a_copy_command_after_a_click_in_the_frame_leaves_the_clipboard_alone(
    run: Any, page: Any, qtbot: Any
) -> None:
    async def scenario() -> str:
        said = emitted(page.page.console, 10, lambda _l, msg, *_: msg.startswith("plant:"))
        await click_plant(page, qtbot)
        _level, message, *_ = await said
        await evaluate(page, "helm.call('c', 'after', {})")  # the engine is done with the click
        return message

    assert run(scenario()) == "plant:direct:true"
    assert QApplication.clipboard().text() == BEFORE


def test_a_page_that_sheds_helms_listeners_gets_its_copy_emptied(run: Any, page: Any, qtbot: Any) -> None:
    async def scenario() -> str:
        changed = emitted(QApplication.clipboard().dataChanged, 10)
        await evaluate(page, "(window.plant.mode = 'reopened')")
        await click_plant(page, qtbot)
        await changed
        return QApplication.clipboard().text()

    assert PLANTED not in run(scenario())
    assert QApplication.clipboard().text() == ""


def test_helms_own_copies_right_after_a_click_in_a_frame_are_kept(run: Any, page: Any, qtbot: Any) -> None:
    field = QLineEdit("typed in Helm")
    qtbot.addWidget(field)
    field.show()
    run(click_plant(page, qtbot))
    copy_text("copied by Helm")
    assert QApplication.clipboard().text() == "copied by Helm"
    field.activateWindow()
    field.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is field, timeout=5000)
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == "typed in Helm"
