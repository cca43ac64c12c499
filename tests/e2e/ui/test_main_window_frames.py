"""The main window with real extension frames: widgets run on the dashboard with their settings."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pytestqt.qtbot import QtBot

from broker.extensions import install, review_and_approve
from broker.kinds.db.explorer import DbExplorer as ExplorerLogic
from broker.workspaces import add_workspace
from tests.e2e.host.kit import PAGES, evaluate
from tests.helpers import new_broker
from ui.aio import emitted
from ui.dialogs.confirm import DialogConfirmer
from ui.extension_frames import HostViewFactory
from ui.host.host import ExtensionHost
from ui.host.view import ExtensionView
from ui.main_window import MainWindow
from ui.qt import Qt
from ui.settings.backend import BrokerConnections
from ui.workspace_model import WorkspaceModel

EXT = "com.example.probe"


def probe_extension(folder: Path) -> Path:
    shutil.copytree(PAGES / "probe", folder)
    manifest = {
        "id": EXT, "name": "Probe", "version": "1.0.0", "kind": "widget", "entry": "index.html",
        "settings": {"repo": {"type": "string", "label": "Repository", "default": "me/app"}},
        "connections": [{"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.txt"],
                         "operations": ["list"]}],
    }  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


async def ready(view: ExtensionView, timeout: float = 20.0) -> None:
    await emitted(view.ready, timeout)


async def settings_seen(view: ExtensionView) -> Any:
    fragment = await evaluate(view, "location.hash")
    assert fragment.startswith("#settings=")
    return json.loads(unquote(fragment[len("#settings=") :]))


@contextlib.contextmanager
def probe_window(qtbot: QtBot, run: Any, tmp_path: Path) -> Iterator[MainWindow]:
    """The main window on a home where the probe widget is installed and approved, its frame
    made by the real extension host; closed with everything it started."""
    broker = new_broker(tmp_path / "home")
    run(broker.__aenter__())
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "a.txt").write_text("x", encoding="utf-8")
    add_workspace(broker.home, "ws", tmp_path / "root")
    install(broker.home, "ws", probe_extension(tmp_path / "ext"))
    run(review_and_approve(broker, "ws", EXT))
    host = ExtensionHost(broker, DialogConfirmer())
    window = MainWindow(
        WorkspaceModel(broker), HostViewFactory(host), BrokerConnections(broker), ExplorerLogic(broker)
    )
    qtbot.addWidget(window)
    window.show()
    try:
        yield window
    finally:
        window.close()
        run(window.aclose())
        run(host.aclose())
        run(broker.aclose())


def test_a_widget_runs_on_the_dashboard_gets_its_settings_and_calls_through_the_bridge(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    with probe_window(qtbot, run, tmp_path) as window:
        card = window.dashboard.cards[0]
        assert isinstance(card.view, ExtensionView)
        first = card.view

        async def scenario() -> tuple[Any, Any, Any]:
            await ready(first)
            before = await settings_seen(first)
            listed = await evaluate(first, "probe.call('notes', 'list', {})")
            qtbot.mouseClick(card.settings_button, Qt.MouseButton.LeftButton)
            assert card.form is not None
            card.form.inputs["repo"].setText("team/site")  # type: ignore[attr-defined]
            card.form.apply()
            assert card.view is not first
            await ready(card.view)  # type: ignore[arg-type]
            after = await settings_seen(card.view)  # type: ignore[arg-type]
            return before, listed, after

        before, listed, after = run(scenario(), 60)
        assert before == {"repo": "me/app"}
        assert listed["ok"] is True
        assert listed["data"]["files"] == [{"path": "a.txt", "size": 1}]
        assert after == {"repo": "team/site"}
        assert card.view.ctx.instance == f"{EXT}#dashboard"  # type: ignore[attr-defined]


def test_a_widget_whose_call_fails_gets_helms_error_strip_and_retry_loads_it_again(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    with probe_window(qtbot, run, tmp_path) as window:
        card = window.dashboard.cards[0]
        view = card.view
        assert isinstance(view, ExtensionView)

        async def scenario() -> tuple[Any, bool, str, str]:
            await ready(view)
            failed = await evaluate(view, "probe.call('notes', 'remove', {})")
            window.feed.deliver()
            seen = card.strip.isVisible(), card.strip.code.text(), card.strip.message.text()
            reloaded = emitted(view.ready, 20)
            qtbot.mouseClick(card.strip.retry, Qt.MouseButton.LeftButton)
            await reloaded
            return failed, *seen

        failed, visible, code, message = run(scenario(), 60)
        assert failed["error"]["code"] == "refused"
        assert (visible, code) == (True, "notes: refused")
        text = failed["error"]["message"]
        assert message == text[:1].upper() + text[1:]  # Helm's message, as a sentence
        assert card.view is view  # Retry loaded the same frame again
        assert not card.strip.isVisible()
