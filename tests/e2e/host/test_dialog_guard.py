"""A write dialog's input guard next to a real web view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready
from tests.ui.samples import summary
from ui.dialogs.confirm import ConfirmDialog


def test_a_frame_loads_and_calls_while_a_dialogs_input_guard_is_up(
    run: Any, frames: Any, tmp_path: Path, qtbot: Any
) -> None:
    # The guard once filtered every event of the application; the web engine's own events then
    # crashed Helm as soon as a frame requested a file while a dialog had just appeared.
    dialog = ConfirmDialog(summary(), guard_ms=60_000)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.guarded
    view = frames(copy_page("probe", tmp_path / "ext"), EchoHandler())

    async def scenario() -> Any:
        await wait_ready(view)
        return await evaluate(view, "probe.call('files', 'list', {})")

    assert run(scenario())["ok"]
    assert dialog.guarded
    dialog.guard.release()
