"""The demo workspace in the real window: every widget shows real data from its kind."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from app.demo import EXTENSIONS, set_up_demo
from app.window import open_window
from broker.approval import Standing
from tests.e2e.host.kit import Dialogs, evaluate
from tests.helpers import new_broker
from ui.dialogs.confirm import DialogConfirmer
from ui.qt import Qt

SCREENSHOT = Path(__file__).resolve().parents[3] / "build" / "screenshots" / "demo.png"

# Resolves with the element's text once it is no longer a placeholder (watched, not polled).
SETTLED = """new Promise((resolve) => {
  const el = document.getElementById(%r);
  const done = () => !/^(Loading|Calling|Asking|Reading)|…$/.test(el.textContent);
  if (done()) { resolve(el.textContent); return; }
  new MutationObserver((_, obs) => { if (done()) { obs.disconnect(); resolve(el.textContent); } })
    .observe(el, {childList: true, characterData: true, subtree: true});
})"""


def test_the_demo_shows_every_kind_and_a_save_asks_for_confirmation(
    run: Any, qtbot: Any, tmp_path: Path, tdt_program: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # With tdt installed the demo is a real TDT workspace (tests/unit/test_demo_tdt.py has both).
    monkeypatch.setenv("PATH", f"{Path(tdt_program[0]).parent}{os.pathsep}{os.environ['PATH']}")

    async def scenario() -> dict[str, Any]:
        async with new_broker(tmp_path / "home") as broker:
            workspace = await set_up_demo(broker)
            ids = [f"dev.helm.demo.{name}" for name in EXTENSIONS]
            assert all(broker.standing(workspace, i).standing is Standing.CURRENT for i in ids)
            dialogs = Dialogs()
            window = open_window(broker, DialogConfirmer(factory=dialogs))
            try:
                assert await window.wait_ready(len(ids), 30)
                views = {view.ctx.extension.rsplit(".", 1)[1]: view for view in window.ready_frames}
                assert sorted(views) == sorted(EXTENSIONS)
                assert window.window.workspace == workspace
                seen = {
                    "tasks": await evaluate(views["tasks"], SETTLED % "status"),
                    "task rows": await evaluate(
                        views["tasks"], "[...document.querySelectorAll('#rows tr')].map(r => r.textContent)"
                    ),
                    "notes": await evaluate(views["notes"], SETTLED % "status"),
                    "clock": await evaluate(views["clock"], SETTLED % "utc"),
                    "status": await evaluate(views["status"], SETTLED % "candidates"),
                    "reminders": await evaluate(views["reminders"], SETTLED % "status"),
                    "brain": await evaluate(views["brain"], SETTLED % "status"),
                    "review": await evaluate(views["candidates"], SETTLED % "status"),
                }
                # The demo's one shared sheet (look.css, copied in at set-up) styles every frame.
                margin = "getComputedStyle(document.body).margin"
                seen["looks"] = {name: await evaluate(view, margin) for name, view in views.items()}
                saving = asyncio.ensure_future(
                    evaluate(views["notes"], "(document.getElementById('save').click(), true)")
                )
                await saving
                dialog = await asyncio.wait_for(dialogs.shown.get(), 30)
                seen["dialog"] = dialog.windowTitle()
                SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                window.window.resize(1600, 900)
                window.window.grab().save(str(SCREENSHOT))
                dialog.grab().save(str(SCREENSHOT.with_name("demo-dialog.png")))
                qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
                seen["after cancel"] = await evaluate(
                    views["notes"], SETTLED.replace("Loading", "Waiting") % "status"
                )
                return seen
            finally:
                await window.aclose()

    seen = run(scenario(), timeout=90)
    assert seen["tasks"] == "2 done, 3 open"
    assert seen["task rows"][0].startswith("Try the Notes widget")
    assert seen["notes"] == "notes/todo.txt"
    assert seen["clock"].endswith("+00:00")
    assert seen["status"] == "1"
    assert seen["reminders"] == "2 pending"
    assert seen["brain"] == "2 notes"
    assert seen["review"] == "1 waiting for review"
    assert seen["looks"] == dict.fromkeys(EXTENSIONS, "0px")  # the engine's own margin is 8px
    assert seen["dialog"] == "Confirm file change"
    assert seen["after cancel"] == "Not saved: you cancelled."
