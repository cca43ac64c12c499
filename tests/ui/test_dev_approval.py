"""Approval in author mode compares a changed manifest with what the user saw approved."""

from __future__ import annotations

import io
import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from broker.manifest import load
from tests.helpers import manifest_dict, new_broker, setup_extension
from ui.dev.approval import DevApproval
from ui.dev.terminal import TerminalReport
from ui.qt import QWidget


def files(paths: list[str]) -> dict[str, object]:
    return {"id": "fs", "kind": "files", "root": "workspace", "paths": paths, "operations": ["list"]}


async def test_a_warning_that_was_there_when_it_was_approved_is_not_a_change(
    qtbot: QtBot, tmp_path: Path
) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    out = io.StringIO()
    async with new_broker(tmp_path / "root" / ".helm") as broker:  # the workspace holds the home
        ctx = await setup_extension(broker, tmp_path, manifest_dict([files(["*.md"])]))
        folder = tmp_path / "ext" / ctx.extension
        approval = DevApproval(broker, "ws", TerminalReport(out), parent, yes=True)
        await approval.ensure(load(folder))  # approved before helm dev started: nothing asked
        (folder / "manifest.json").write_text(json.dumps(manifest_dict([files(["*.md", "*.txt"])])))
        await approval.ensure(load(folder))
    lines = [line.split(" ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == [
        f"review  approving {ctx.extension} on the terminal (--yes-dev):",
        "review  [fs] + read files *.txt (list)",
        f"review  approved {ctx.extension}",
    ]
